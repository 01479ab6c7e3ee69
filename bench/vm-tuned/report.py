#!/usr/bin/env python3
"""bench/vm-tuned/report.py: turns the guest's samples.tsv and meta.txt into
the table (stdout), the samples as JSON (--json; bench/vm-tuned/run puts them
in the VM's output directory, not in git) and the table as Markdown (--md,
bench/results/vm-tuned.md).
Called by bench/vm-tuned/run; reads only the run's output directory."""

import argparse
import datetime
import json
import os
import platform
import statistics
import sys


def read_meta(path):
    meta = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if "=" in line:
                k, v = line.split("=", 1)
                meta[k] = v
    return meta


def read_samples(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        for line in f:
            vals = line.rstrip("\n").split("\t")
            row = dict(zip(header, vals))
            for k in ("cmd_s", "settle_s", "undo_s"):
                row[k] = None if row[k] in ("", "NA") else float(row[k])
            for k in ("idx", "passes", "rc", "undo_rc", "undo_left"):
                row[k] = int(row[k])
            rows.append(row)
    return rows


def stats(values):
    v = sorted(values)
    if not v:
        return None
    q = statistics.quantiles(v, n=4, method="inclusive") if len(v) >= 2 else [v[0]] * 3
    return {"n": len(v), "median": statistics.median(v), "min": v[0], "max": v[-1],
            "q1": q[0], "q3": q[2], "samples": values}


def fmt(x):
    return "n/a" if x is None else f"{x:.2f} s"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--nictunectl", required=True)
    ap.add_argument("--vm-seconds", type=int, default=0)
    ap.add_argument("--host-load-start", default="?")
    ap.add_argument("--json")
    ap.add_argument("--md")
    a = ap.parse_args()

    meta = read_meta(os.path.join(a.out_dir, "meta.txt"))
    rows = read_samples(os.path.join(a.out_dir, "samples.tsv"))
    rec = [r for r in rows if r["phase"] == "rep"]
    tools = ["nictune", "tuned"]
    st = {}
    for t in tools:
        mine = [r for r in rec if r["tool"] == t]
        settled = [r["settle_s"] for r in mine if r["settle_s"] is not None]
        st[t] = {
            "time_to_settings": stats(settled),
            "command": stats([r["cmd_s"] for r in mine]),
            "undo": stats([r["undo_s"] for r in mine]),
            "reps": len(mine),
            "failed": sum(1 for r in mine if r["settle_s"] is None or r["rc"] != 0),
            "polled": sum(1 for r in mine if r["passes"] > 1),
            "undo_left_ports": sum(r["undo_left"] for r in mine),
        }
    ok = all(st[t]["time_to_settings"] and st[t]["failed"] == 0 for t in tools)
    ratio = (st["tuned"]["time_to_settings"]["median"] / st["nictune"]["time_to_settings"]["median"]
             if ok else None)
    undo_ratio = (st["tuned"]["undo"]["median"] / st["nictune"]["undo"]["median"]
                  if st["tuned"]["undo"] and st["nictune"]["undo"] else None)

    now = datetime.datetime.now(datetime.timezone.utc)
    nports = len(meta.get("ports", "").split())
    tuned_version = meta.get("tuned", "?")
    settings = {
        "coalesce": {"adaptive-rx": "on", "adaptive-tx": "on", "rx-usecs": 50, "tx-usecs": 50},
        "rings": {"rx": 4096, "tx": 4096},
        "ring_maxima_debugfs": 8192,
        "driver_defaults": meta.get("defaults"),
        "target_as_ethtool_shows": meta.get("target"),
    }
    shipped = {
        "tuned_adm_s": float(meta["shipped_cmd_s"]) if "shipped_cmd_s" in meta else None,
        "tuned_adm_exit": meta.get("shipped_rc"),
        "ports_with_every_value": meta.get("shipped_ports_all"),
        "ports_with_coalescing": meta.get("shipped_ports_coalesce"),
        "ports_with_rings": meta.get("shipped_ports_rings"),
        "tuned_log_unknown_coalesce_lines": meta.get("shipped_unknown_coalesce_lines"),
        "tuned_log_first": meta.get("shipped_unknown_coalesce_first"),
        "undo_s": float(meta["shipped_undo_s"]) if "shipped_undo_s" in meta else None,
        "undo_left_ports": meta.get("shipped_undo_left"),
    }

    # --- the table ---
    lines = ["| tool | median | min..max | reps | command alone (median) | undo (median) |",
             "|---|---|---|---|---|---|"]
    label = {"nictune": "nictune (`nictunectl --direct apply`)",
             "tuned": f"tuned {tuned_version} [net] (`tuned-adm profile`)"}
    for t in tools:
        s = st[t]
        tt = s["time_to_settings"]
        rng = f"{tt['min']:.2f}..{tt['max']:.2f} s" if tt else "n/a"
        extra = f" ({s['failed']} failed)" if s["failed"] else ""
        lines.append(f"| {label[t]} | {fmt(tt['median'] if tt else None)} | {rng} | {s['reps']}{extra} | "
                     f"{fmt(s['command']['median'] if s['command'] else None)} | "
                     f"{fmt(s['undo']['median'] if s['undo'] else None)} |")
    table = "\n".join(lines)
    ratio_line = (f"**tuned / nictune = {ratio:.1f}x** (ratio of medians, time until all {nports} ports "
                  f"show the settings)" if ratio else "**ratio: n/a** (a tool failed; see the samples)")
    print(table)
    print()
    print(ratio_line)
    if undo_ratio:
        print(f"undo (tuned-adm profile BASE vs nictunectl rollback): {undo_ratio:.1f}x")

    doc = {
        "benchmark": "vm-tuned (issue 6, item 4)",
        "date": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": a.command,
        "host": {"kernel": platform.release(), "cpus": os.cpu_count(),
                 "loadavg_start": a.host_load_start,
                 "loadavg_end": " ".join(open("/proc/loadavg").read().split()[:3])},
        "guest": {k: meta.get(k) for k in ("kernel", "nproc", "systemd", "ethtool", "tuned",
                                            "nictunectl", "load_start", "load_end", "guest_s",
                                            "tuned_start_s", "tuned_restart_s")},
        "vm_wall_s": a.vm_seconds,
        "nictunectl_measured": a.nictunectl + " (copied, strip --strip-unneeded)",
        "ports": meta.get("ports", "").split(),
        "settings": settings,
        "stats": st,
        "ratio_tuned_over_nictune": ratio,
        "ratio_undo_tuned_over_nictune": undo_ratio,
        "shipped_tuned_unpatched": shipped,
        "samples": rows,
        "raw_output": a.out_dir,
    }
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    if a.md:
        with open(a.md, "w", encoding="utf-8") as f:
            f.write(render_md(doc, table, ratio_line, nports, tuned_version, meta, shipped, st, undo_ratio))
    return 0 if ok else 1


def render_md(doc, table, ratio_line, nports, tv, meta, shipped, st, undo_ratio):
    g = doc["guest"]
    warm = [r for r in doc["samples"] if r["phase"] == "warmup"]
    warm_txt = ", ".join(f"{r['tool']} {r['settle_s']:.2f} s" for r in warm if r["settle_s"] is not None)
    polled = sum(st[t]["polled"] for t in st)
    sh = shipped
    return f"""# VM: nictune vs tuned's [net] plugin on {nports} netdevsim ports (issue 6, item 4)

Date: {doc['date']} (UTC). Guest: kernel {g['kernel']}, {g['nproc']} vCPUs under **TCG (software
emulation)**, systemd {g['systemd']}; {g['ethtool']}; tuned {tv} (Debian 12's package); {g['nictunectl']}.

How it was run (host, as root):

```
{doc['command']}
```

which boots `tests/vm/run-vm --mode systemd` with `bench/vm-tuned/guest.sh` (whole VM run
{doc['vm_wall_s']} s).

## Settings (identical for both tools)

One netdevsim device with {nports} ports (`{doc['ports'][0]}`..`{doc['ports'][-1]}`), ring maxima raised
to 8192 through debugfs (`ports/N/ethtool/ring/{{rx,tx}}_max_pending`).

| | nictune profile (TOML) | tuned profile (`/etc/tuned/nictune-bench-net/tuned.conf`) |
|---|---|---|
| coalescing | `[coalesce]` `adaptive_rx = true`, `adaptive_tx = true`, `rx_usecs = 50`, `tx_usecs = 50` | `[net]` `coalesce=adaptive-rx on adaptive-tx on rx-usecs 50 tx-usecs 50` |
| rings | `[rings]` `rx = 4096`, `tx = 4096` | `ring=rx 4096 tx 4096` |
| which ports | all {nports} names on the command line | `devices=` the {nports} names, `dynamic=0` |

Driver defaults (ethtool): `{meta.get('defaults')}`; target: `{meta.get('target')}`.

## Result

{table}

{ratio_line}.

- *median, min..max*: wall time from starting the command to every port showing every
  value, {st['nictune']['reps']} recorded repetitions per tool after one warm-up each
  (warm-up: {warm_txt}), the tools alternating which goes first.
- *command alone*: the same without the check; both commands return only once the
  settings are in place, so the two columns are equal unless a port had to be polled
  ({polled} polled measurements in this run).
- *undo*: `nictunectl --direct rollback` of the {nports} ports vs `tuned-adm profile
  nictune-bench-base` (the profile without `[net]`), for information{f"; tuned/nictune = {undo_ratio:.1f}x" if undo_ratio else ""}.
  After every undo the harness read all ports back (untimed): ports not back at the
  driver's defaults: nictune {st['nictune']['undo_left_ports']}, tuned {st['tuned']['undo_left_ports']} (summed over the recorded reps).

## Debian's tuned as shipped cannot apply the coalescing at all

First, tuned {tv} exactly as packaged (one run, right after `tuned.service` started, so
Python's modules were still cold): `tuned-adm profile nictune-bench-net` exited
{sh['tuned_adm_exit']} after {sh['tuned_adm_s']:.2f} s, and ethtool then showed the rings on
{sh['ports_with_rings']}/{nports} ports but the coalescing on {sh['ports_with_coalescing']}/{nports}. tuned's log has
{sh['tuned_log_unknown_coalesce_lines']} lines (one per port) like

```
{sh['tuned_log_first']}
```

ethtool 6.1 ends `ethtool -c` with a `CQE mode RX: off  TX: off` line (netdevsim
supports CQE mode) that tuned 2.20's parser does not know, so `plugin_net` rejects the
device's coalescing parameters and skips `coalesce=` on every device, silently as far
as `tuned-adm` is concerned (exit 0). Upstream: redhat-performance/tuned issue #726,
fixed by PR #736 (tuned 2.25).

The timed runs therefore use tuned with that fix applied inside the VM only (two lines in
`plugin_net.py`, in the guest's RAM overlay: `"CQE mode RX:" -> "cqe-mode-rx:"` in the
parser and `cqe-mode-rx` accepted as a coalescing parameter; tuned restarted), so
that tuned does the same work as nictune. The host's tuned is not modified.

## Method

- `bench/vm-tuned/guest.sh` runs in a systemd-mode VM (tuned is a D-Bus service):
  it creates the ports, raises the ring maxima, writes both profiles and an empty
  tuned profile `nictune-bench-base`, starts `tuned.service` on the empty profile,
  then measures.
- One measurement, the same for both tools: (untimed) every port is put back to the
  driver's defaults with ethtool where it differs and checked with `ethtool -c`/`-g`
  on every port; (timed, bash `$EPOCHREALTIME`, no process in between) the command
  runs to its exit; (untimed) `ethtool -c` and `ethtool -g` on every port must show
  every value; had a port not shown them, the ports would have been polled (at
  most 20 passes / 180 s) and the time would be the end of the first pass in which
  all showed them. Then the tool's own undo, timed for information.
- nictune: `nictunectl --color never --direct --profiles-dir DIR --state-dir DIR apply
  bench-nsim PORT...` (all {nports} names, state directory on tmpfs), returns after
  reading every value back; undo: `nictunectl --direct --state-dir DIR rollback PORT...`.
- tuned: `tuned-adm profile nictune-bench-net` (synchronous: it waits for the daemon's
  `profile_changed` signal, sent after static tuning of every device); undo:
  `tuned-adm profile nictune-bench-base`.
- The measured nictunectl is the build tree's binary, copied and stripped (as
  `cmake --install --strip` ships it): `{doc['nictunectl_measured']}`.
- Every command is bounded (`timeout`), every loop is bounded in count; the VM has
  `--timeout`. Only the guest's netdevsim ports are touched; the VM's NICs have no
  host backend, so nothing on the host's network changes.

## Caveats

- **TCG**: the guest runs under software emulation on a shared 2-core host (KVM is
  not usable here, see tests/vm/README.md), where each process start costs ~0.2-0.3 s.
  Absolute times are far slower than on hardware; the **ratio** is the headline.
  The ratio on hardware will differ, in a direction not measured here: TCG inflates
  process start-up (exec, page faults) more than plain computation, and tuned's cost is
  mostly process starts (per port `ethtool -c`, `ethtool -C`, `ethtool -g`, `ethtool -G`:
  {4 * nports} processes for {nports} ports, plus Python in the daemon and in `tuned-adm`), while
  nictune is one process sending netlink requests.
- Load average, guest at start / end: {' '.join(g['load_start'].split()[:3])} / {' '.join(g['load_end'].split()[:3])}; host (2 cores,
  shared with other sessions' builds and VMs) at start / end: {doc['host']['loadavg_start']} /
  {doc['host']['loadavg_end']}. Read the spreads.
- The timed tuned is 2.20 plus the two-line parser fix above; as shipped it does not
  apply `coalesce=` at all with Debian 12's ethtool.
- tuned 2.20's parser also turns the `TX:` of that CQE line into a second
  `adaptive-tx` entry, which overwrites the real one; on netdevsim both are `off`, so
  the value tuned saves for its undo happens to be right. On a NIC whose adaptive-tx
  differs from its CQE TX mode, tuned would save the wrong original (and with `n/a`,
  its undo's `ethtool -C ... adaptive-tx n/a` fails).
- Both tools run with a warm page cache (the warm-up); the first tuned-adm call of
  the shipped run also loaded Python modules from the 9p root share.
- netdevsim accepts any coalescing values and applies them in memory: this measures
  the tools' overhead on real driver code paths, not hardware reconfiguration time.
"""


if __name__ == "__main__":
    sys.exit(main())
