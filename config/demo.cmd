# edgegw demo (scripts/demo): the gateway engine between an access port
# (port 0: subscribers) and an uplink (port 1). IPv4/IPv6 is forwarded
# between the two, ARP and PPPoE go to the control path, the rest is dropped
# with a reason.
set fwd gateway xconnect
port role 0 access
port role 1 uplink
show config
