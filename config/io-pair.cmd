# io forwarding between port 0 and port 1 (testpmd's default pairing).
# edgegw -l 0,1 --vdev net_tap0,iface=egw0 --vdev net_tap1,iface=egw1 -- --cmdline-file config/io-pair.cmd
set fwd io
show config
