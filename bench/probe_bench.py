"""The probe scenario of bench/bench.py (issue 15): `nictunectl probe`
against the tools it stands in for, on veth paths between namespaces this
module creates (nictune-bench-<tag>-pa, -ps, -pb; removed afterwards).

- Throughput: `nictunectl probe B --throughput` against iperf3's own client
  (`iperf3 -c B -J`), both against one `iperf3 -s` in B, alternating, on an
  unshaped veth: the CPU is the limit, so the ratio is how efficient the
  client is (target >= 0.95, median over median).
- Path MTU: the time of the search (the JSON's path_mtu_search.seconds) and
  of the whole command (`--count 1`: one echo for the latency), on a clean
  9000-byte path (target <= 1 s) and on a bridge that drops frames above
  1500 silently (target <= 3 s); the verdicts take the slowest repetition.
"""

import json
import os
import resource
import subprocess
import time


class Topology:
    def __init__(self, tag, run):
        self.run = run
        self.names = {k: f"nictune-bench-{tag}-p{k}" for k in ("a", "s", "b")}
        self.created = []

    def ns(self, k):
        return self.names[k]

    def create(self, keys):
        for k in keys:
            n = self.names[k]
            if os.path.exists(f"/run/netns/{n}"):
                raise RuntimeError(f"namespace {n} exists already (another bench run?)")
            self.run(["ip", "netns", "add", n])
            self.created.append(n)
            self.sh(k, "ip link set lo up")

    def delete(self):
        while self.created:
            self.run(["ip", "netns", "del", self.created.pop()], check=False)

    def sh(self, k, script):
        return self.run(["ip", "netns", "exec", self.names[k], "sh", "-c", script])

    def veth(self, a, an, b, bn):
        self.run(["ip", "link", "add", "name", an, "netns", self.names[a], "type", "veth", "peer",
                  "name", bn, "netns", self.names[b]])

    def direct(self, mtu):
        self.create(["a", "b"])
        self.veth("a", "pa0", "b", "pb0")
        self.sh("a", f"ip link set pa0 mtu {mtu} && ip addr add 10.60.0.1/24 dev pa0 && ip link set pa0 up")
        self.sh("b", f"ip link set pb0 mtu {mtu} && ip addr add 10.60.0.2/24 dev pb0 && ip link set pb0 up")
        self.settle()

    def switch(self, port_b_mtu):
        self.create(["a", "s", "b"])
        self.veth("a", "pa0", "s", "psa")
        self.veth("b", "pb0", "s", "psb")
        self.sh("s", "ip link add name br0 type bridge && ip link set psa master br0 && "
                     f"ip link set psb master br0 && ip link set psa mtu 9000 && ip link set psb mtu {port_b_mtu} && "
                     "ip link set psa up && ip link set psb up && ip link set br0 up")
        self.sh("a", "ip link set pa0 mtu 9000 && ip addr add 10.60.0.1/24 dev pa0 && ip link set pa0 up")
        self.sh("b", "ip link set pb0 mtu 9000 && ip addr add 10.60.0.2/24 dev pb0 && ip link set pb0 up")
        self.settle()

    def settle(self):
        for _ in range(20):
            if self.run(["ip", "netns", "exec", self.names["a"], "ping", "-c", "1", "-W", "1", "10.60.0.2"],
                        check=False).returncode == 0:
                return
        raise RuntimeError("bench probe topology: no ping answer from 10.60.0.2")

    def established(self, k, port=5201):
        r = self.sh(k, f"ss -Htn state established '( sport = :{port} )' | wc -l")
        return int(r.stdout.strip() or 0)


def wait_idle(topo):
    """iperf3 -s needs a moment after a test before it takes the next client."""
    for _ in range(100):
        if topo.established("b") == 0:
            break
        time.sleep(0.02)
    time.sleep(0.1)


def throughput(ctx, topo, log, summary, reverse, reps, seconds):
    a = topo.ns("a")
    ours_cmd = ["ip", "netns", "exec", a, ctx.ctl, "probe", "10.60.0.2", "--json", "--count", "1",
                "--throughput", "--time", str(seconds)] + (["--reverse"] if reverse else [])
    theirs_cmd = ["ip", "netns", "exec", a, "iperf3", "-c", "10.60.0.2", "-t", str(seconds), "-J"] + \
                 (["-R"] if reverse else [])
    ours, theirs, retr_ours, retr_theirs = [], [], [], []
    # CPU seconds of the client per GB received: how much work each client
    # does, which other processes on the machine disturb less than the rate.
    cpu_ours, cpu_theirs = [], []
    # Every kept run in the order it ran, for per-pair ratios and to see
    # which runs were slow (retransmissions, CPU per GB): the summaries sort.
    runs = []

    def cpu_of(fn):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = fn()
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        return out, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)

    for rep in range(reps + 1):  # the first pair is a warm-up
        order = ("ours", "theirs") if rep % 2 == 0 else ("theirs", "ours")
        for who in order:
            wait_idle(topo)
            if who == "ours":
                r, cpu = cpu_of(lambda: ctx.run(ours_cmd, timeout=seconds + 60))
                t = json.loads(r.stdout)["throughput"]
                if rep > 0:
                    ours.append(t["gbps"])
                    retr_ours.append(t["retransmits"])
                    cpu_ours.append(cpu / (t["bytes"] / 1e9))
                    runs.append({"rep": rep, "client": "nictune", "gbps": t["gbps"],
                                 "retransmits": t["retransmits"], "cpu_s": cpu,
                                 "cpu_s_per_gb": cpu_ours[-1]})
            else:
                r, cpu = cpu_of(lambda: ctx.run(theirs_cmd, timeout=seconds + 60))
                j = json.loads(r.stdout)
                if "error" in j:
                    raise RuntimeError(f"iperf3 -c: {j['error']}")
                if rep > 0:
                    theirs.append(j["end"]["sum_received"]["bits_per_second"] / 1e9)
                    retr_theirs.append(j["end"]["sum_sent"].get("retransmits"))
                    cpu_theirs.append(cpu / (j["end"]["sum_received"]["bytes"] / 1e9))
                    runs.append({"rep": rep, "client": "iperf3", "gbps": theirs[-1],
                                 "retransmits": retr_theirs[-1], "cpu_s": cpu,
                                 "cpu_s_per_gb": cpu_theirs[-1]})
        if rep > 0:
            log(f"probe throughput{' -R' if reverse else ''}: nictune {ours[-1]:.2f}, iperf3 {theirs[-1]:.2f} Gbit/s")
    pair_ratios = [a / b for a, b in zip(ours, theirs) if b > 0]
    return {"reverse": reverse, "seconds": seconds, "nictune": summary(ours), "iperf3": summary(theirs),
            "runs": runs, "pair_ratio": summary(pair_ratios),
            "retransmits_nictune": retr_ours, "retransmits_iperf3": retr_theirs,
            "cpu_s_per_gb_nictune": summary(cpu_ours), "cpu_s_per_gb_iperf3": summary(cpu_theirs),
            "ratio": summary(ours)["median"] / summary(theirs)["median"]}


def mtu_times(ctx, topo, summary, reps, expect_mtu, expect_source):
    cmd = ["ip", "netns", "exec", topo.ns("a"), ctx.ctl, "probe", "10.60.0.2", "--json", "--count", "1"]
    search, whole = [], []
    for _ in range(reps + 1):
        t0 = time.monotonic()
        r = ctx.run(cmd, check=False, timeout=60)
        dt = time.monotonic() - t0
        if r.returncode not in (0, 6):
            raise RuntimeError(f"nictunectl probe: exit {r.returncode}: {r.stderr}")
        j = json.loads(r.stdout)
        if j["path_mtu"] != expect_mtu or j["path_mtu_source"] != expect_source:
            raise RuntimeError(f"nictunectl probe found {j['path_mtu']} ({j['path_mtu_source']}), "
                               f"expected {expect_mtu} ({expect_source})")
        search.append(j["path_mtu_search"]["seconds"] * 1000)
        whole.append(dt * 1000)
    # The first run is a warm-up (page cache, neighbour entries).
    return {"search_ms": summary(search[1:]), "whole_ms": summary(whole[1:]),
            "probes": j["path_mtu_search"]["probes"], "rounds": j["path_mtu_search"]["rounds"]}


def scenario(ctx, log, summary, reps=5, seconds=3):
    if not ctx.have("iperf3"):
        raise RuntimeError("the probe scenario needs iperf3 (scripts/install-deps demo)")
    out = {}
    topo = Topology(ctx.args.tag, ctx.run)
    try:
        topo.direct(1500)
        server = subprocess.Popen(["ip", "netns", "exec", topo.ns("b"), "iperf3", "-s", "--forceflush"],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        ctx.children.append(server)
        try:
            server.stdout.readline()
            server.stdout.readline()  # "Server listening on 5201 ..."
            out["throughput"] = [throughput(ctx, topo, log, summary, rev, reps, seconds)
                                 for rev in (False, True)]
        finally:
            server.terminate()
            server.wait(10)
            ctx.children.remove(server)
        topo.delete()

        topo.direct(9000)
        log("probe: path MTU on a clean 9000-byte path")
        out["mtu_clean"] = mtu_times(ctx, topo, summary, 2 * reps, 9000, "interface")
        topo.delete()

        topo.switch(1500)
        log("probe: path MTU through a bridge that drops frames above 1500")
        out["mtu_black_hole"] = mtu_times(ctx, topo, summary, 2 * reps, 1500, "black_hole")
    finally:
        topo.delete()
    return out


def report(p, lines, verdicts, fmt_ms, spread):
    lines.append("### Probe (`nictunectl probe`, issue 15)")
    lines.append("")
    lines.append("Throughput against iperf3's own client, alternating, against one `iperf3 -s`, on an "
                 "unshaped veth between two namespaces (MTU 1500; the CPU is the limit):")
    lines.append("")
    lines.append("| direction | test | nictune (Gbit/s) | iperf3 -c (Gbit/s) | nictune / iperf3 | per pair: median (min..max) | retransmits nictune / iperf3 | client CPU s per GB, nictune / iperf3 |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for t in p["throughput"]:
        n, i, pr = t["nictune"], t["iperf3"], t["pair_ratio"]
        lines.append(f"| {'peer sends (-R)' if t['reverse'] else 'this host sends'} | {n['n']} x {t['seconds']} s | "
                     f"{n['median']:.2f} ({n['min']:.2f}..{n['max']:.2f}) | {i['median']:.2f} ({i['min']:.2f}..{i['max']:.2f}) | "
                     f"{t['ratio']:.2f} | {pr['median']:.2f} ({pr['min']:.2f}..{pr['max']:.2f}) | {sum(x or 0 for x in t['retransmits_nictune'])} / "
                     f"{sum(x or 0 for x in t['retransmits_iperf3'])} | "
                     f"{t['cpu_s_per_gb_nictune']['median']:.3f} / {t['cpu_s_per_gb_iperf3']['median']:.3f} |")
    lines.append("")
    lines.append("Path MTU (`nictunectl probe B --count 1`): the search's own time and the whole command "
                 "(process start, route and link read, one echo, the search):")
    lines.append("")
    lines.append("| path | found | search | whole command | requests | rounds |")
    lines.append("|---|---|---|---|---|---|")
    for key, name, found in (("mtu_clean", "clean, 9000 both ends", "9000 (interface)"),
                             ("mtu_black_hole", "bridge port at 1500, ends at 9000", "1500 (black hole)")):
        m = p[key]
        lines.append(f"| {name} | {found} | {fmt_ms(m['search_ms']['median'])} ({spread(m['search_ms'])}) | "
                     f"{fmt_ms(m['whole_ms']['median'])} ({spread(m['whole_ms'])}) | {m['probes']} | {m['rounds']} |")
    lines.append("")
    fwd = p["throughput"][0]
    verdicts.append(("probe throughput >= 0.95 of iperf3 -c (this host sends)", fwd["ratio"] >= 0.95,
                     f"{fwd['ratio']:.2f}"))
    clean = p["mtu_clean"]["search_ms"]["max"]
    hole = p["mtu_black_hole"]["search_ms"]["max"]
    verdicts.append(("path-MTU probe <= 1 s on a clean path (slowest)", clean <= 1000, fmt_ms(clean)))
    verdicts.append(("path-MTU probe <= 3 s on a black hole (slowest)", hole <= 3000, fmt_ms(hole)))
