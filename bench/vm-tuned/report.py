#!/usr/bin/env python3
"""bench/vm-tuned/report.py: turns the guest's samples.tsv and meta.txt into
the three-way table (stdout: nictune, tuned, systemd-udevd), the samples as
JSON (--json; bench/vm-tuned/run puts them in the VM's output directory, not
in git) and the table as Markdown (--md, bench/results/vm-tuned.md).
Called by bench/vm-tuned/run; reads only the run's output directory."""

import argparse
import datetime
import json
import os
import platform
import statistics
import sys

TOOLS = ["nictune", "tuned", "udevd"]
UDEVD_STEPS = ["reload", "trigger", "settle"]


def read_meta(path):
    meta = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if "=" in line:
                k, v = line.split("=", 1)
                meta[k] = v
    return meta


def parse_parts(text):
    """'reload=0.1,trigger=0.2,...' -> dict (numbers as float where they are)."""
    out = {}
    if text in ("", "-", None):
        return out
    for item in text.split(","):
        if "=" not in item:
            continue
        k, v = item.split("=", 1)
        try:
            out[k] = float(v) if k in UDEVD_STEPS else int(v)
        except ValueError:
            out[k] = v
    return out


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
            row["parts"] = parse_parts(row.get("parts", "-"))
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


def median_of(s):
    return s["median"] if s else None


def tool_stats(rec, tool):
    mine = [r for r in rec if r["tool"] == tool]
    settled = [r["settle_s"] for r in mine if r["settle_s"] is not None]
    st = {
        "time_to_settings": stats(settled),
        "command": stats([r["cmd_s"] for r in mine]),
        "undo": stats([r["undo_s"] for r in mine if r["undo_s"] is not None]),
        "reps": len(mine),
        "failed": sum(1 for r in mine if r["settle_s"] is None or r["rc"] != 0),
        "polled": sum(1 for r in mine if r["passes"] > 1),
        "undo_left_ports": sum(r["undo_left"] for r in mine),
    }
    if tool == "udevd":
        st["steps"] = {k: stats([r["parts"][k] for r in mine if k in r["parts"]]) for k in UDEVD_STEPS}
        st["triggered"] = sorted({r["parts"].get("triggered") for r in mine})
        st["linked"] = sorted({r["parts"].get("linked") for r in mine})
    return st


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
    st = {t: tool_stats(rec, t) for t in TOOLS}
    good = {t: bool(st[t]["time_to_settings"]) and st[t]["failed"] == 0 for t in TOOLS}
    base = median_of(st["nictune"]["time_to_settings"]) if good["nictune"] else None
    ratio = {t: (median_of(st[t]["time_to_settings"]) / base if base and good[t] else None)
             for t in ("tuned", "udevd")}
    undo_ratio = (st["tuned"]["undo"]["median"] / st["nictune"]["undo"]["median"]
                  if st["tuned"]["undo"] and st["nictune"]["undo"] else None)
    # udevd without its `udevadm control --reload` (the per-repetition sum of
    # trigger and settle), for the reader who does not count the reload
    ud_rows = [r for r in rec if r["tool"] == "udevd" and r["settle_s"] is not None and r["rc"] == 0
               and "reload" in r["parts"]]
    ud_noreload = stats([r["settle_s"] - r["parts"]["reload"] for r in ud_rows])
    ratio_noreload = (ud_noreload["median"] / base if ud_noreload and base else None)

    now = datetime.datetime.now(datetime.timezone.utc)
    nports = len(meta.get("ports", "").split())
    tuned_version = meta.get("tuned", "?")
    udevd_version = meta.get("udevd", "?")
    link_path = os.path.join(a.out_dir, "logs", "10-nictune-bench.link")
    link_text = open(link_path, encoding="utf-8").read() if os.path.exists(link_path) else None
    settings = {
        "coalesce": {"adaptive-rx": "on", "adaptive-tx": "on", "rx-usecs": 50, "tx-usecs": 50},
        "rings": {"rx": 4096, "tx": 4096},
        "ring_maxima_debugfs": 8192,
        "driver_defaults": meta.get("defaults"),
        "target_as_ethtool_shows": meta.get("target"),
        "link_file": link_text,
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
    udevd = {
        "version": udevd_version,
        "change_event_triggered": meta.get("udevd_change_triggered"),
        "change_event_rcs": meta.get("udevd_change_rcs"),
        "change_event_ports_with_values": meta.get("udevd_change_ports_with_values"),
        "change_event_ports_changed": meta.get("udevd_change_ports_changed"),
        "journal_warnings": meta.get("udevd_journal_warnings"),
        "journal_first_warning": meta.get("udevd_journal_first_warning"),
        "control_warnings": meta.get("udevd_control_warnings"),
        "control_first_warning": meta.get("udevd_control_first_warning"),
        "control_state": meta.get("udevd_control_state"),
        "without_reload": ud_noreload,
        "ratio_without_reload_over_nictune": ratio_noreload,
    }

    # --- the table ---
    lines = ["| tool | median | min..max | reps | / nictune | command alone (median) | undo (median) |",
             "|---|---|---|---|---|---|---|"]
    label = {"nictune": "nictune (`nictunectl --direct apply`)",
             "tuned": f"tuned {tuned_version} [net] (`tuned-adm profile`)",
             "udevd": f"systemd-udevd {udevd_version} (.link; `udevadm control --reload`, "
                      "`trigger --action=add`, `settle`)"}
    for t in TOOLS:
        s = st[t]
        tt = s["time_to_settings"]
        rng = f"{tt['min']:.2f}..{tt['max']:.2f} s" if tt else "n/a"
        extra = f" ({s['failed']} failed)" if s["failed"] else ""
        rel = "1" if t == "nictune" else (f"**{ratio[t]:.1f}x**" if ratio.get(t) else "n/a")
        undo = fmt(median_of(s["undo"])) if t != "udevd" else "none (udev has no undo)"
        lines.append(f"| {label[t]} | {fmt(median_of(tt))} | {rng} | {s['reps']}{extra} | {rel} | "
                     f"{fmt(median_of(s['command']))} | {undo} |")
    table = "\n".join(lines)

    def rl(t, name):
        return f"**{name} / nictune = {ratio[t]:.1f}x**" if ratio[t] else f"**{name} / nictune: n/a** (a tool failed; see the samples)"
    ratio_line = (f"{rl('udevd', 'udevd')}, {rl('tuned', 'tuned')} (ratios of medians, time until all "
                  f"{nports} ports show the settings)")
    print(table)
    print()
    print(ratio_line)
    sd = st["udevd"]["steps"]
    if any(sd.values()):
        print("udevd steps (medians): " + ", ".join(f"{k} {fmt(median_of(sd[k]))}" for k in UDEVD_STEPS)
              + (f"; without the reload {fmt(ud_noreload['median'])} = {ratio_noreload:.1f}x nictune"
                 if ratio_noreload else ""))
    if undo_ratio:
        print(f"undo (tuned-adm profile BASE vs nictunectl rollback): {undo_ratio:.1f}x")
    print(f"udevd on a 'change' event: {udevd['change_event_ports_changed']}/{nports} ports changed; "
          f"udevd's journal: {udevd['journal_warnings']} warnings about the ports or the file "
          f"(control, a ring above the maximum: {udevd['control_warnings']})")

    doc = {
        "benchmark": "vm-tuned (issue 6, item 4; issue 16: udevd)",
        "date": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": a.command,
        "host": {"kernel": platform.release(), "cpus": os.cpu_count(),
                 "loadavg_start": a.host_load_start,
                 "loadavg_end": " ".join(open("/proc/loadavg").read().split()[:3])},
        "guest": {k: meta.get(k) for k in ("kernel", "nproc", "systemd", "systemd_version", "ethtool", "tuned",
                                            "udevd", "nictunectl", "load_start", "load_end", "guest_s",
                                            "tuned_at_boot", "tuned_start_s", "tuned_restart_s")},
        "vm_wall_s": a.vm_seconds,
        "nictunectl_measured": a.nictunectl + " (copied, strip --strip-unneeded)",
        "ports": meta.get("ports", "").split(),
        "settings": settings,
        "stats": st,
        "ratio_tuned_over_nictune": ratio["tuned"],
        "ratio_udevd_over_nictune": ratio["udevd"],
        "ratio_undo_tuned_over_nictune": undo_ratio,
        "shipped_tuned_unpatched": shipped,
        "udevd": udevd,
        "samples": rows,
        "raw_output": a.out_dir,
    }
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    if a.md:
        with open(a.md, "w", encoding="utf-8") as f:
            f.write(render_md(doc, table, ratio_line, nports, meta, shipped, st, undo_ratio, udevd))
    return 0 if all(good.values()) else 1


def orders(samples):
    """The order of the tools in each recorded repetition, as run."""
    seq = {}
    for r in samples:
        if r["phase"] == "rep":
            seq.setdefault(r["idx"], []).append(r["tool"])
    return "; ".join(f"{i}: {' '.join(v)}" for i, v in sorted(seq.items()))


def render_md(doc, table, ratio_line, nports, meta, shipped, st, undo_ratio, ud):
    g = doc["guest"]
    tv = g["tuned"] or "?"
    uv = g["udevd"] or "?"
    warm = [r for r in doc["samples"] if r["phase"] == "warmup"]
    warm_txt = ", ".join(f"{r['tool']} {r['settle_s']:.2f} s" for r in warm if r["settle_s"] is not None)
    polled = sum(st[t]["polled"] for t in st)
    sh = shipped
    sd = st["udevd"]["steps"]
    steps_txt = ", ".join(f"`{k}` {fmt(median_of(sd[k]))}" for k in UDEVD_STEPS)
    noreload = (f"{fmt(ud['without_reload']['median'])}, {ud['ratio_without_reload_over_nictune']:.1f}x nictune"
                if ud["ratio_without_reload_over_nictune"] else "n/a")
    link = doc["settings"]["link_file"] or "(not found in the run's logs)\n"
    warn = int(ud["journal_warnings"] or 0)
    if warn:
        warn_txt = (f"**{warn} lines** about the ports or the file, the first:\n\n```\n"
                    f"{ud['journal_first_warning']}\n```\n\nThe ethtool check above still decides whether "
                    "the values arrived.")
    else:
        warn_txt = ("no `Could not ...`, `Failed ...`, `ignoring` or `Unknown ...` line naming "
                    "a port or the .link file: udevd applied every key on every port without a complaint.")
    if sh["tuned_adm_s"] is not None:
        shipped_txt = f"""First, tuned {tv} exactly as packaged (one run, right after `tuned.service` started, so
Python's modules were still cold): `tuned-adm profile nictune-bench-net` exited
{sh['tuned_adm_exit']} after {sh['tuned_adm_s']:.2f} s, and ethtool then showed the rings on
{sh['ports_with_rings']}/{nports} ports but the coalescing on {sh['ports_with_coalescing']}/{nports}. tuned's log has
{sh['tuned_log_unknown_coalesce_lines']} lines (one per port) like

```
{sh['tuned_log_first']}
```"""
    else:
        shipped_txt = f"""Not run this time (`--no-shipped`, to save ~7 minutes under TCG). In earlier runs
(2026-11-30, and again on 2026-12-02 in a run of this script stopped before its repetitions), tuned
{tv} exactly as packaged: `tuned-adm profile nictune-bench-net` exited 0, and ethtool then showed
the rings on 32/32 ports but the coalescing on 0/32; tuned's log had 32 lines (one per port) like

```
2026-11-30 13:41:32,484 ERROR    tuned.plugins.plugin_net: unknown coalesce parameter(s): {{'CQE mode RX'}}
```"""
    cw = int(ud["control_warnings"] or 0)
    if cw:
        control_txt = (f"The scan can fail: a control after the repetitions (one port, `RxBufferSize=16384`, above "
                       f"its maximum of 8192, `trigger --action=add`) gave {cw} new line(s), the first:\n\n```\n"
                       f"{ud['control_first_warning']}\n```\n\nand left the port at `{ud['control_state']}` "
                       "(the other keys applied, the ring not).")
    else:
        control_txt = ("**The control did not work, and shows a silent clamp instead**: one port with "
                       "`RxBufferSize=16384`, above its maximum of 8192 (`trigger --action=add`), gave no new "
                       f"line in udevd's journal and left the port at `{ud['control_state']}`: systemd 252 sets "
                       "a ring above the device's maximum to the maximum, without a word. So the count of "
                       "warnings above is not proven able to see a failure here; the ethtool check is what "
                       "proves the values.")
    return f"""# VM: nictune vs tuned's [net] plugin vs systemd-udevd (.link) on {nports} netdevsim ports (issue 6, item 4; issue 16)

Date: {doc['date']} (UTC). Guest: kernel {g['kernel']}, {g['nproc']} vCPUs under **TCG (software
emulation)**, {g['systemd_version']} as PID 1 ({g['systemd']}), its systemd-udevd; {g['ethtool']};
tuned {tv} (Debian 12's package); {g['nictunectl']}.

How it was run (host, as root):

```
{doc['command']}
```

which boots `tests/vm/run-vm --mode systemd --guest-packages tuned` with `bench/vm-tuned/guest.sh`
(whole VM run {doc['vm_wall_s']} s).

## Settings (identical for the three tools)

One netdevsim device with {nports} ports (`{doc['ports'][0]}`..`{doc['ports'][-1]}`), ring maxima raised
to 8192 through debugfs (`ports/N/ethtool/ring/{{rx,tx}}_max_pending`).

| | nictune profile (TOML) | tuned profile (`/etc/tuned/nictune-bench-net/tuned.conf`) | udevd: `/etc/systemd/network/10-nictune-bench.link` |
|---|---|---|---|
| coalescing | `[coalesce]` `adaptive_rx = true`, `adaptive_tx = true`, `rx_usecs = 50`, `tx_usecs = 50` | `[net]` `coalesce=adaptive-rx on adaptive-tx on rx-usecs 50 tx-usecs 50` | `[Link]` `UseAdaptiveRxCoalesce=yes`, `UseAdaptiveTxCoalesce=yes`, `RxCoalesceSec=50us`, `TxCoalesceSec=50us` |
| rings | `[rings]` `rx = 4096`, `tx = 4096` | `ring=rx 4096 tx 4096` | `RxBufferSize=4096`, `TxBufferSize=4096` |
| which ports | all {nports} names on the command line | `devices=` the {nports} names, `dynamic=0` | `[Match]` `Driver=netdevsim`; `udevadm trigger --sysname-match=` each of the {nports} names |

Driver defaults (ethtool): `{meta.get('defaults')}`; target: `{meta.get('target')}`.

The .link file as written in the guest:

```ini
{link.rstrip()}
```

Every key exists in systemd 252's `systemd.link(5)` (checked in the man page of 252.39): the
ring keys since systemd 244, the coalescing keys since 250. `RxCoalesceSec=`/`TxCoalesceSec=` take
a **time span** (`parse_sec()`: a bare `50` would be 50 seconds), hence `50us`; udevd hands the
kernel microseconds. The file replaces `99-default.link` for the ports it matches (the first
matching file wins), so it repeats that file's `NamePolicy=`, `AlternativeNamesPolicy=` and
`MACAddressPolicy=`; the ports keep their names.

## Result

{table}

{ratio_line}.

- *median, min..max*: wall time from starting the (first) command to every port showing every
  value, {st['nictune']['reps']} recorded repetitions per tool after one warm-up each
  (warm-up: {warm_txt}); the order of the three tools changes every repetition, going through
  the six permutations ({orders(doc['samples'])}).
- *command alone*: the same without the check; every tool's commands return only once the
  settings are in place (`udevadm settle` once udevd's event queue is empty), so the two
  columns are equal unless a port had to be polled ({polled} polled measurements in this run).
- *udevd*: the timed span is `udevadm control --reload`, then `udevadm trigger --verbose
  --action=add --subsystem-match=net --sysname-match=PORT...` (all {nports} names), then
  `udevadm settle`, what an administrator runs after writing a .link file. The reload is
  **timed** (an administrator who edits the file runs it; udevd 252 also notices changed
  .link directories by itself, checked at most every 3 s at the next event, so it can be
  skipped). Medians of the steps: {steps_txt}; without the reload {noreload}.
  `udevadm trigger` named {', '.join(str(x) for x in st['udevd']['triggered'])} ports; after the
  settle, udev's database (`/run/udev/data/nIFINDEX`, `ID_NET_LINK_FILE=`) named the file for
  {', '.join(str(x) for x in st['udevd']['linked'])} ports.
- *undo*: `nictunectl --direct rollback` of the {nports} ports vs `tuned-adm profile
  nictune-bench-base` (the profile without `[net]`), for information{f"; tuned/nictune = {undo_ratio:.1f}x" if undo_ratio else ""}.
  **udev has no undo**: a .link file only sets; removing it (and `udevadm control --reload`,
  untimed) leaves the ports as they are. After every undo the harness read all ports back
  (untimed) and reset with ethtool what differed; ports not back at the driver's defaults,
  summed over the recorded reps: nictune {st['nictune']['undo_left_ports']}, tuned {st['tuned']['undo_left_ports']},
  udevd {st['udevd']['undo_left_ports']} (i.e. every port, every time: the reset was ethtool's).

## udevd's behaviour

- **Only on "add" (and "bind", "move") events.** systemd 252's `net_setup_link` skips a
  .link file's settings on any other uevent ("Skipping to apply .link settings on 'change'
  uevent", debug level). Checked once (untimed), after the warm-ups, with the file in place:
  `udevadm trigger --action=change` on the {nports} ports (it named {ud['change_event_triggered']}; exit codes
  reload/trigger/settle {ud['change_event_rcs']}) changed **{ud['change_event_ports_changed']}/{nports}** ports (ports showing every value:
  {ud['change_event_ports_with_values']}). `udevadm trigger` sends "change" unless told otherwise, so a plain
  `udevadm trigger` after editing a .link file applies nothing; re-sending "add" to a
  running interface is what makes udevd apply it (nothing else in udev's rules for net
  devices acts on it differently here: the ports keep their names, which the check reads
  them by).
- **Failures are logged, not reported**: `udevadm trigger` and `settle` exit 0 whatever
  net_setup_link managed to set; udevd writes a warning to its journal and goes on.
- No drift handling and no verification: udevd applies the file once per event and does
  not read the values back; the harness's ethtool check is what confirms them.

udevd's journal in the guest (`journalctl -b -u systemd-udevd`, the whole boot up to the end
of the repetitions) has {warn_txt}

{control_txt}

## Debian's tuned as shipped cannot apply the coalescing at all

{shipped_txt}

ethtool 6.1 ends `ethtool -c` with a `CQE mode RX: off  TX: off` line (netdevsim
supports CQE mode) that tuned 2.20's parser does not know, so `plugin_net` rejects the
device's coalescing parameters and skips `coalesce=` on every device, silently as far
as `tuned-adm` is concerned (exit 0). Upstream: redhat-performance/tuned issue #726,
fixed by PR #736 (tuned 2.25).

The timed runs therefore use tuned with that fix applied inside the VM only (two lines in
`plugin_net.py`, in the guest's RAM overlay: `"CQE mode RX:" -> "cqe-mode-rx:"` in the
parser and `cqe-mode-rx` accepted as a coalescing parameter; tuned restarted), so
that tuned does the same work as nictune. tuned is a guest package (installed into the
guest's overlay by run-vm, never on the host).

## Method

- `bench/vm-tuned/guest.sh` runs in a systemd-mode VM (tuned is a D-Bus service, udevd is the
  guest's own): it creates the ports, raises the ring maxima, writes the nictune profile, the
  tuned profile and an empty tuned profile `nictune-bench-base`, (re)starts `tuned.service` on
  the empty profile (tuned {g['tuned_at_boot']} at boot: its postinst enables it), then measures.
- One measurement, the same for every tool: (untimed) every port is put back to the
  driver's defaults with ethtool where it differs and checked with `ethtool -c`/`-g`
  on every port; for udevd the .link file is written; (timed, bash `$EPOCHREALTIME`, no
  process in between) the command(s) run to the (last one's) exit; (untimed) `ethtool -c`
  and `ethtool -g` on every port must show every value; had a port not shown them, the
  ports would have been polled (at most 20 passes / 180 s) and the time would be the end of
  the first pass in which all showed them. Then the tool's own undo, timed for information
  (udevd: the file removed, no undo).
- nictune: `nictunectl --color never --direct --profiles-dir DIR --state-dir DIR apply
  bench-nsim PORT...` (all {nports} names, state directory on tmpfs), returns after
  reading every value back; undo: `nictunectl --direct --state-dir DIR rollback PORT...`.
- tuned: `tuned-adm profile nictune-bench-net` (synchronous: it waits for the daemon's
  `profile_changed` signal, sent after static tuning of every device); undo:
  `tuned-adm profile nictune-bench-base`.
- udevd: as above; `udevadm settle` waits until udevd's queue is empty, i.e. every
  triggered event has been processed (net_setup_link's ethtool ioctls are done).
- The measured nictunectl is the build tree's binary, copied and stripped (as
  `cmake --install --strip` ships it): `{doc['nictunectl_measured']}`.
- Every command is bounded (`timeout`), every loop is bounded in count; the VM has
  `--timeout`. Only the guest's netdevsim ports are touched; the VM's NICs have no
  host backend, so nothing on the host's network changes.

## Caveats

- **TCG**: the guest runs under software emulation on a shared 2-core host (KVM is
  not usable here, see tests/vm/README.md), where each process start costs ~0.2-0.3 s.
  Absolute times are far slower than on hardware; the **ratios** are the headline.
  They will differ on hardware, in a direction not measured here: TCG inflates
  process start-up (exec, page faults) more than plain computation. tuned's cost is
  mostly process starts (per port `ethtool -c`, `ethtool -C`, `ethtool -g`, `ethtool -G`:
  {4 * nports} processes for {nports} ports, plus Python in the daemon and in `tuned-adm`); udevd's is
  three `udevadm` processes plus, per port, one forked udevd worker running the net rules
  (builtins, ioctls, the udev database written to /run); nictune is one process sending
  netlink requests.
- Load average, guest at start / end: {' '.join((g['load_start'] or '?').split()[:3])} / {' '.join((g['load_end'] or '?').split()[:3])}; host (2 cores,
  shared with other sessions' builds and VMs) at start / end: {doc['host']['loadavg_start']} /
  {doc['host']['loadavg_end']}. Read the spreads.
- The timed tuned is 2.20 plus the two-line parser fix above; as shipped it does not
  apply `coalesce=` at all with Debian 12's ethtool.
- tuned 2.20's parser also turns the `TX:` of that CQE line into a second
  `adaptive-tx` entry, which overwrites the real one; on netdevsim both are `off`, so
  the value tuned saves for its undo happens to be right. On a NIC whose adaptive-tx
  differs from its CQE TX mode, tuned would save the wrong original (and with `n/a`,
  its undo's `ethtool -C ... adaptive-tx n/a` fails).
- The tools do not do quite the same work around the settings: nictune saves the
  originals and reads every value back; tuned saves the originals; udevd saves nothing
  and reads nothing back, but every "add" event also runs udev's other net rules.
- All tools run with a warm page cache (the warm-up); the first tuned-adm call of
  the shipped run also loaded Python modules from the 9p root share.
- netdevsim accepts any coalescing values and applies them in memory: this measures
  the tools' overhead on real driver code paths, not hardware reconfiguration time.
"""


if __name__ == "__main__":
    sys.exit(main())
