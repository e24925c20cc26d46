# edgegw demo (scripts/demo): the gateway engine, unrouted, between a lan
# port (port 0: hosts with plain IP) and an uplink (port 1). IPv4/IPv6 is
# forwarded between the two, ARP goes to the control path, PPPoE is dropped
# (port 0 is no access port: pppoe_not_access), the rest is dropped with a
# reason. An access port carries PPPoE sessions only (config/pppoe-demo.cmd).
set fwd gateway xconnect
port role 0 lan
port role 1 uplink
show config
