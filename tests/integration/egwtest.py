# SPDX-License-Identifier: BSD-3-Clause
"""Shared helpers for the edgegw integration tests (run with /usr/bin/python3).

Every check goes through Checker: it prints what it checked and the values it
saw, counts failures, and finish() exits 1 if any check failed (77 = skip).
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77
# sanitizer builds (-Db_sanitize=address,undefined): UBSan reports do not
# change the exit status, so every edgegw stderr is scanned for them
SANITIZER_MARKS = ("runtime error:", "AddressSanitizer", "LeakSanitizer")
sanitizer_reports = []


def scan_sanitizer(err):
    for line in err.splitlines():
        if any(m in line for m in SANITIZER_MARKS):
            sanitizer_reports.append(line)
            print("  SANITIZER: %s" % line, flush=True)


def eal_args(name, lcores="0,1", in_memory=False):
    """EAL options for one edgegw run: one worker lcore, no hugepages."""
    a = ["-l", lcores, "--no-huge", "-m", "512", "--no-pci",
         "--file-prefix", "egwtest_" + name, "--log-level=warning"]
    if in_memory:
        a.append("--in-memory")
    return a


def telemetry_path(name):
    """The DPDK telemetry socket of an edgegw run started with eal_args(name)."""
    base = "/var/run" if os.geteuid() == 0 else os.environ.get("XDG_RUNTIME_DIR", "/tmp")
    return os.path.join(base, "dpdk", "egwtest_" + name, "dpdk_telemetry.v2")


class Checker:
    def __init__(self, name):
        self.name = name
        self.failed = 0
        self.passed = 0
        self.failures = []  # what each failed check was, repeated at the end
        self.t0 = time.monotonic()
        self.tmp = tempfile.mkdtemp(prefix="egw-%s-" % name)
        print("[%s] work dir %s" % (name, self.tmp), flush=True)

    def log(self, msg):
        print("  [%6.2f s] %s" % (time.monotonic() - self.t0, msg), flush=True)

    def path(self, *p):
        return os.path.join(self.tmp, *p)

    def check(self, cond, what, detail=""):
        if cond:
            self.passed += 1
            print("  ok   %s%s" % (what, (": " + detail) if detail else ""), flush=True)
        else:
            self.failed += 1
            self.failures.append(what)
            print("  FAIL %s%s" % (what, (": " + detail) if detail else ""), flush=True)
        return bool(cond)

    def eq(self, got, want, what):
        return self.check(got == want, what, "got %r, want %r" % (got, want))

    def finish(self):
        if self.failed == 0 and self.passed == 0:
            print("[%s] FAIL: no check ran" % self.name)
            sys.exit(1)
        self.check(not sanitizer_reports, "no sanitizer report on edgegw's stderr",
                   "%d lines" % len(sanitizer_reports))
        print("[%s] %d checks passed, %d failed (%.1f s)" %
              (self.name, self.passed, self.failed, time.monotonic() - self.t0), flush=True)
        if self.failed:
            # repeated here: a long log is often cut to its last lines
            for what in self.failures:
                print("[%s] failed: %s" % (self.name, what))
            print("[%s] inputs and outputs kept in %s" % (self.name, self.tmp))
            sys.exit(1)
        shutil.rmtree(self.tmp, ignore_errors=True)
        sys.exit(0)

    def skip(self, why):
        print("[%s] SKIP: %s" % (self.name, why), flush=True)
        shutil.rmtree(self.tmp, ignore_errors=True)
        sys.exit(SKIP)


def run_edgegw(binary, eal, app, timeout=60, cwd=None):
    """Run edgegw to completion; returns (returncode, stdout, stderr)."""
    cmd = [binary] + eal + ["--"] + app
    print("  run: %s" % " ".join(cmd), flush=True)
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout, cwd=cwd, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace")
        err = (e.stderr or b"").decode(errors="replace")
        print("  edgegw did not exit within %d s\n--- stdout\n%s--- stderr\n%s" %
              (timeout, out, err))
        return None, out, err
    err = p.stderr.decode(errors="replace")
    scan_sanitizer(err)
    return p.returncode, p.stdout.decode(errors="replace"), err


class Running:
    """edgegw in the background, its stdout and stderr going to files."""

    def __init__(self, c, tag, binary, eal, app, stdin=subprocess.DEVNULL, nice=None):
        """nice: the scheduling niceness edgegw runs at (all its threads), or
        None for the test's own."""
        cmd = [binary] + eal + ["--"] + app
        print("  start: %s%s" % ("" if nice is None else "(nice %d) " % nice, " ".join(cmd)),
              flush=True)
        self.out_path, self.err_path = c.path(tag + ".stdout"), c.path(tag + ".stderr")
        self._out, self._err = open(self.out_path, "wb"), open(self.err_path, "wb")
        pre = None if nice is None else (lambda: os.setpriority(os.PRIO_PROCESS, 0, nice))
        self.p = subprocess.Popen(cmd, stdout=self._out, stderr=self._err, stdin=stdin,
                                  preexec_fn=pre)

    def stdout(self):
        with open(self.out_path, errors="replace") as f:
            return f.read()

    def stderr(self):
        with open(self.err_path, errors="replace") as f:
            return f.read()

    def alive(self):
        return self.p.poll() is None

    def stop(self, timeout=20):
        """SIGTERM, then wait; returns the exit status (None if it had to be killed)."""
        rc = None
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        try:
            rc = self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            print("  edgegw ignored SIGTERM for %d s: killed" % timeout)
            self.p.kill()
            self.p.wait()
        self._out.close()
        self._err.close()
        scan_sanitizer(self.stderr())
        return rc


def show_output(out, err, limit=4000):
    print("--- edgegw stdout (tail)\n%s\n--- edgegw stderr (tail)\n%s\n---" %
          (out[-limit:], err[-limit:]), flush=True)


def load_json(c, path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        c.check(False, "stats JSON %s readable" % os.path.basename(path), str(e))
        return None


def qstats_identity(s):
    """rx + created = tx + delivered + queued + sum(drops) (created: frames
    made beyond one per received frame, ESP segments and fragments, and
    ICMP errors sent in reply)."""
    drops = sum(s["drops"].values())
    return s["rx"] + s["created"] == s["tx"] + s["delivered"] + s["queued"] + drops, drops


def check_identity(c, js):
    """rx + created = tx + delivered + queued + sum(drops) for every port and
    queue; identity_ok true; dropped equals the sum of the drops."""
    for p in js["ports"]:
        ok, drops = qstats_identity(p)
        c.check(ok, "port %d identity rx + created = tx + delivered + queued + drops" %
                p["port"],
                "%d + %d = %d + %d + %d + %d" % (p["rx"], p["created"], p["tx"], p["delivered"],
                                                 p["queued"], drops))
        c.eq(p["identity_ok"], True, "port %d identity_ok" % p["port"])
        c.eq(p["dropped"], drops, "port %d dropped = sum of drops by reason" % p["port"])
        qsum = {k: 0 for k in ("rx", "created", "tx", "delivered", "queued")}
        for q in p["queues"]:
            ok, drops = qstats_identity(q)
            c.check(ok, "port %d queue %d identity" % (p["port"], q["queue"]),
                    "%d + %d = %d + %d + %d + %d" % (q["rx"], q["created"], q["tx"],
                                                     q["delivered"], q["queued"], drops))
            for k in qsum:
                qsum[k] += q[k]
        for k in qsum:
            c.eq(qsum[k], p[k], "port %d: sum over queues of %s equals the port's" % (p["port"], k))


def port_by_id(js, pid):
    for p in js["ports"]:
        if p["port"] == pid:
            return p
    return None


def pcap_frames(path):
    """Raw bytes of every frame in a capture (scapy's reader)."""
    from scapy.utils import RawPcapReader
    frames = []
    r = RawPcapReader(path)
    try:
        for data, _meta in r:
            frames.append(bytes(data))
    finally:
        r.close()
    return frames


def write_pcap(path, frames):
    """Write raw frames (bytes) as an Ethernet capture, whatever their size."""
    from scapy.utils import RawPcapWriter
    w = RawPcapWriter(path, linktype=1, sync=True)
    w._write_header(None)
    for f in frames:
        w.write(bytes(f))
    w.close()


def frames_summary(frames):
    return "%d frames, sizes %s" % (len(frames), [len(f) for f in frames])


def same_frame_set(c, got, want, what):
    """Same frames as a multiset (order not checked)."""
    ok = sorted(got) == sorted(want)
    c.check(ok, what, "got %s; want %s" % (frames_summary(got), frames_summary(want)))
    return ok


def compare_frames(c, got, want, what):
    """Exact sequence equality, with the first difference reported."""
    c.eq(len(got), len(want), "%s: number of frames" % what)
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            off = next((k for k in range(min(len(g), len(w))) if g[k] != w[k]),
                       min(len(g), len(w)))
            c.check(False, "%s: frame %d byte for byte" % (what, i + 1),
                    "len got %d want %d; first difference at byte %d: got %s want %s" %
                    (len(g), len(w), off, g[off:off + 16].hex(), w[off:off + 16].hex()))
            return
    if len(got) == len(want):
        c.check(True, "%s: all %d frames equal byte for byte, in order" % (what, len(want)))


class Tel:
    """The DPDK telemetry socket (v2: a JSON banner, then one reply per command)."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.s.settimeout(5)
        self.s.connect(path)
        self.banner = json.loads(self.s.recv(16384).decode())
        self.max_len = self.banner.get("max_output_len", 16384)

    def query(self, cmd):
        self.s.send(cmd.encode())
        return json.loads(self.s.recv(self.max_len).decode())

    def close(self):
        self.s.close()


def wait_for(pred, timeout, step=0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(step)
    return pred()
