# edgegw PPPoE demo (scripts/demo, docs/pppoe.md): port 0 faces the
# subscribers (PPPoE access concentrator), port 1 is the uplink. Subscribers
# get an IPv4 address from 100.64.0.0/24 (100.64.0.1 is edgegw's own) and a
# /64 each from 2001:db8:100::/48 by router advertisement.
# DEMO-ONLY secrets: never for real subscribers.
set fwd gateway xconnect
port role 0 access
port role 1 uplink
pppoe ac-name edgegw-demo
pppoe service-name add internet
pppoe pool add 100.64.0.0/24
pppoe pool add 2001:db8:100::/48
pppoe dns 192.0.2.53 192.0.2.54
pppoe keepalive 10 3
ppp auth pap
ppp user add alice alice-demo-secret
ppp user add bob bob-demo-secret
ppp user add carol carol-demo-secret address 100.64.0.100
start
