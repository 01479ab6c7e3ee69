# ethtool2json.awk - turns the text of `ethtool -c|-g|-l|-a DEV` (ethtool 6.1)
# into one JSON object keyed like nictune's audit JSON (docs/profiles.md), so
# a guest test can compare the two with one jq call. ethtool is the oracle
# here, never a dependency of the product.
#   ethtool -g eth1 | awk -v kind=rings -f ethtool2json.awk
#   -> {"rx_max":8192,"rx_mini_max":8192,...,"rx":512,...}
# "n/a" becomes null (nictune's JSON must then have no such key). Lines the
# table does not know are ignored.
BEGIN {
  FS = ":[ \t]*"
  sep = ""
  printf "{"
  # ethtool -c field -> audit key
  split("stats-block-usecs=stats_block_usecs sample-interval=sample_interval " \
        "pkt-rate-low=pkt_rate_low pkt-rate-high=pkt_rate_high " \
        "rx-usecs=rx_usecs rx-frames=rx_frames rx-usecs-irq=rx_usecs_irq rx-frames-irq=rx_frames_irq " \
        "tx-usecs=tx_usecs tx-frames=tx_frames tx-usecs-irq=tx_usecs_irq tx-frames-irq=tx_frames_irq " \
        "rx-usecs-low=rx_usecs_low rx-frame-low=rx_frames_low tx-usecs-low=tx_usecs_low tx-frame-low=tx_frames_low " \
        "rx-usecs-high=rx_usecs_high rx-frame-high=rx_frames_high tx-usecs-high=tx_usecs_high tx-frame-high=tx_frames_high",
        pairs, " ")
  for (i in pairs) { split(pairs[i], kv, "="); coal[kv[1]] = kv[2] }
  # ethtool -g / -l field -> audit key (suffix _max in the "Pre-set maximums" block)
  ring["RX"] = "rx"; ring["RX Mini"] = "rx_mini"; ring["RX Jumbo"] = "rx_jumbo"; ring["TX"] = "tx"
  ring["RX Buf Len"] = "rx_buf_len"; ring["CQE Size"] = "cqe_size"; ring["TX Push"] = "tx_push"
  chan["RX"] = "rx"; chan["TX"] = "tx"; chan["Other"] = "other"; chan["Combined"] = "combined"
  pause["Autonegotiate"] = "autoneg"; pause["RX"] = "rx"; pause["TX"] = "tx"
  block = ""
}
function value(v) {
  gsub(/[ \t]+$/, "", v)
  if (v == "n/a") return "null"
  if (v == "on") return "true"
  if (v == "off") return "false"
  if (v ~ /^[0-9]+$/) return v
  return "\"" v "\""
}
function emit(k, v) { printf "%s\"%s\":%s", sep, k, value(v); sep = "," }
/^Pre-set maximums/ { block = "_max"; next }
/^Current hardware settings/ { block = ""; next }
kind == "coalesce" && /^(Adaptive|CQE mode) RX:/ {
  # "Adaptive RX: on  TX: off" / "CQE mode RX: n/a  TX: n/a"
  prefix = ($1 ~ /^Adaptive/) ? "adaptive_" : "cqe_mode_"
  line = $0
  sub(/^[^:]*:[ \t]*/, "", line)
  split(line, parts, /[ \t]+TX:[ \t]*/)
  emit(prefix "rx", parts[1]); emit(prefix "tx", parts[2])
  next
}
kind == "coalesce" && ($1 in coal) { emit(coal[$1], $2); next }
kind == "rings" && ($1 in ring) {
  if (block == "_max" && $1 ~ /^(RX|RX Mini|RX Jumbo|TX)$/) emit(ring[$1] "_max", $2)
  else if (block == "") emit(ring[$1], $2)
  next
}
kind == "channels" && ($1 in chan) { emit(chan[$1] block, $2); next }
kind == "pause" && ($1 in pause) { emit(pause[$1], $2); next }
END { print "}" }
