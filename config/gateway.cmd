# Gateway: port 0 faces hosts with plain IP (role lan), port 1 the core.
# IPv4/IPv6 frames to port 0's MAC leave on port 1 and back; PPPoE and ARP
# go to the control path; malformed frames, frames for other stations and
# unknown classes are dropped with their reason (show fwd stats).
set fwd gateway xconnect
port role 0 lan
port role 1 uplink
show config
