# Routing demo (scripts/demo step 9): edgegw routes between two networks.
# Port 0 faces the namespace egwdemoA (203.0.113.0/24), port 1 egwdemoB
# (198.51.100.0/24); each namespace has edgegw as its default router.
set fwd gateway
port role 0 uplink
port role 1 uplink
ip address add 203.0.113.1/24 port 0
ip address add 2001:db8:a::1/64 port 0
ip address add 198.51.100.1/24 port 1
ip address add 2001:db8:b::1/64 port 1
# a route beyond egwdemoB's host (it answers for it: see the demo)
ip route add 192.0.2.128/25 via 198.51.100.2
start
