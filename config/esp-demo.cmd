# edgegw demo, ESP step (scripts/demo): the gateway engine with an IPsec
# tunnel on the uplink. Port 0 (lan) faces the protected hosts, port 1
# (uplink) the peer gateway 198.51.100.1.
#
#   lan -> uplink: the hosts' traffic to the servers (IPv4 and IPv6, from
#     config/demo.pcap) leaves as ESP, tunnel mode, AES-128-GCM, SPI 0x1000,
#     outer 192.0.2.1 -> 198.51.100.1; other traffic passes in clear, as the
#     last outbound rule says (without it, traffic no rule matches is
#     discarded: RFC 4301 5, edgegw's default once a direction has a rule)
#   uplink -> lan: ESP from the peer (SPI 0x2000, config/demo-esp-uplink.pcap)
#     is decrypted; replies from the servers that arrive in clear are dropped
#     (esp_in_clear: the inbound policy says they must come through the SA),
#     and so is other clear traffic (esp_policy_default: no rule lets it in)
#
# DEMO-ONLY KEYS. They are published in this file (and the second one in
# scripts/make-demo-pcap.py), so anyone can decrypt this traffic -- which is
# what the demo shows with tshark. Never use them, or any key kept in a file
# like this one, for real traffic. Each key is 16 bytes of AES-128 key and a
# 4-byte salt, in hex: the ASCII of "demo-only-key-ou" (outbound) or
# "demo-only-key-in" (inbound), then "salt".
set fwd gateway xconnect
port role 0 lan
port role 1 uplink
# outbound sequence numbers persist here, per key, so that a restart never
# reuses a sequence number (= GCM IV) under the same key; a relative path is
# taken from edgegw's working directory. A missing file is refused: the
# first run says 'esp state-file esp-demo.state create' (scripts/demo does)
esp state-file esp-demo.state
esp sa add 0x1000 out aead aes-128-gcm key 64656d6f2d6f6e6c792d6b65792d6f7573616c74 mode tunnel src 192.0.2.1 dst 198.51.100.1
esp sa add 0x2000 in aead aes-128-gcm key 64656d6f2d6f6e6c792d6b65792d696e73616c74 mode tunnel src 198.51.100.1 dst 192.0.2.1
esp policy add out src 100.64.0.0/24 dst 203.0.113.0/24 protect 0x1000
esp policy add out src 2001:db8:100::/64 dst 2001:db8:200::/64 protect 0x1000
esp policy add out src 0.0.0.0/0 dst 0.0.0.0/0 bypass
esp policy add out src ::/0 dst ::/0 bypass
esp policy add in src 203.0.113.0/24 dst 100.64.0.0/24 protect 0x2000
esp policy add in src 2001:db8:200::/64 dst 2001:db8:100::/64 protect 0x2000
