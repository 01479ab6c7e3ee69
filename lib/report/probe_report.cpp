#include "report/probe_report.hpp"

#include <fmt/format.h>

#include "report/json_util.hpp"
#include "report/style.hpp"

namespace nictune::report {
namespace {

using Json = nlohmann::json;

Json or_null(const std::optional<uint32_t>& v) {
    return v ? Json(*v) : Json(nullptr);
}

double num(const Json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::string ms(double v) {
    return v < 10 ? fmt::format("{:.3f} ms", v) : fmt::format("{:.1f} ms", v);
}

}  // namespace

Json probe_json(const probe::ProbeResult& r) {
    Json j;
    j["peer"] = r.peer.spec;
    j["address"] = r.peer.address;
    j["family"] = r.peer.ipv6() ? "ipv6" : "ipv4";
    j["interface"] = {{"name", r.interface.name},
                      {"ifindex", r.interface.ifindex},
                      {"mtu", r.interface.mtu},
                      {"chosen", r.interface.chosen},
                      {"gateway", r.interface.gateway ? Json(*r.interface.gateway) : Json()}};
    j["icmp_socket"] =
        (r.latency || r.path_mtu) ? Json(probe::icmp_socket_name(r.icmp_socket)) : Json(nullptr);
    if (r.path_mtu) {
        const auto& m = *r.path_mtu;
        j["path_mtu"] = m.path_mtu;
        j["path_mtu_source"] = probe::mtu_source_name(m.source);
        j["next_hop_mtu"] = or_null(m.next_hop_mtu);
        j["icmp_from"] = m.icmp_from.empty() ? Json(nullptr) : Json(m.icmp_from);
        j["path_mtu_search"] = {{"probes", m.probes}, {"rounds", m.rounds}, {"seconds", m.seconds}};
    } else {
        for (const char* k :
             {"path_mtu", "path_mtu_source", "next_hop_mtu", "icmp_from", "path_mtu_search"})
            j[k] = nullptr;
    }
    if (r.latency) {
        const auto& l = *r.latency;
        j["rtt_ms"] = {{"min", l.rtt.min_ms},
                       {"p50", l.rtt.p50_ms},
                       {"p99", l.rtt.p99_ms},
                       {"max", l.rtt.max_ms}};
        j["echo"] = {{"sent", l.sent}, {"received", l.received}, {"bytes", l.ip_bytes}};
    } else {
        j["rtt_ms"] = nullptr;
        j["echo"] = nullptr;
    }
    if (r.throughput) {
        const auto& t = *r.throughput;
        j["throughput"] = {{"gbps", t.gbps},
                           {"retransmits", t.retransmits ? Json(*t.retransmits) : Json(nullptr)},
                           {"streams", t.streams},
                           {"reverse", t.reverse},
                           {"seconds", t.seconds},
                           {"bytes", t.bytes},
                           {"port", t.port}};
    } else {
        j["throughput"] = nullptr;
    }
    j["seconds"] = r.seconds;
    return j;
}

std::string probe_text(const Json& j, bool color) {
    const Style s{color, 11};
    const Json& iface = j.contains("interface") ? j.at("interface") : Json::object();
    const std::string name = text_of(iface, "name");
    std::string out;
    std::string peer = text_of(j, "address");
    if (text_of(j, "peer") != peer) peer = text_of(j, "peer") + " (" + peer + ")";
    out += fmt::format("{} via {} (MTU {})", s.wrap("1", peer), name, text_of(iface, "mtu"));
    if (!text_of(iface, "gateway").empty()) out += ", gateway " + text_of(iface, "gateway");
    if (!text_of(j, "icmp_socket").empty())
        out += ", ICMP over a " + text_of(j, "icmp_socket") + " socket";
    out += fmt::format(", {:.2f} s\n", num(j, "seconds"));

    if (j.contains("path_mtu") && !j.at("path_mtu").is_null()) {
        const std::string src = text_of(j, "path_mtu_source");
        const std::string mtu = text_of(j, "path_mtu");
        std::string why;
        if (src == "interface") {
            why = "the path carries " + name + "'s MTU";
        } else if (src == "icmp") {
            const bool v6 = text_of(j, "family") == "ipv6";
            why = s.wrap("1;33", "a router") + " (" + text_of(j, "icmp_from") + ") answers " +
                  (v6 ? "\"packet too big\"" : "\"fragmentation needed\"") + ": next-hop MTU " +
                  text_of(j, "next_hop_mtu") + "; " + name + " sends up to " +
                  text_of(iface, "mtu");
        } else {
            why = s.wrap("1;31", "black hole") +
                  ": nothing larger came back and no ICMP said why (" + name + " sends up to " +
                  text_of(iface, "mtu") + "; a switch or the peer does not carry bigger frames)";
            if (!text_of(j, "next_hop_mtu").empty())
                why += "; a router (" + text_of(j, "icmp_from") + ") also said next-hop MTU " +
                       text_of(j, "next_hop_mtu");
        }
        out += fmt::format("  {} {}  {}\n", s.label("path MTU"), mtu, why);
    }
    if (j.contains("rtt_ms") && j.at("rtt_ms").is_object()) {
        const Json& r = j.at("rtt_ms");
        const Json& e = j.at("echo");
        out +=
            fmt::format("  {} p50 {}  p99 {}  max {}  ({}/{} answered, {} bytes)\n",
                        s.label("latency"), ms(num(r, "p50")), ms(num(r, "p99")), ms(num(r, "max")),
                        text_of(e, "received"), text_of(e, "sent"), text_of(e, "bytes"));
    }
    if (j.contains("throughput") && j.at("throughput").is_object()) {
        const Json& t = j.at("throughput");
        const auto streams = static_cast<int>(num(t, "streams"));
        const bool reverse = t.value("reverse", false);
        std::string retr = text_of(t, "retransmits");
        out += fmt::format(
            "  {} {:.2f} Gbit/s  retransmits {}  ({} stream{}, {}, {:.1f} s, iperf3 "
            "port {})\n",
            s.label("throughput"), num(t, "gbps"), retr.empty() ? "n/a" : retr, streams,
            streams == 1 ? "" : "s", reverse ? "the peer sends" : "this host sends",
            num(t, "seconds"), text_of(t, "port"));
    }
    return out;
}

Json verify_peer_json(const probe::PeerCheck& c, const probe::ProbeResult* route,
                      const probe::ProbeResult* before, const probe::ProbeResult* after,
                      const std::string& verdict, const std::optional<std::string>& reason) {
    Json j;
    j["peer"] = c.peer;
    const probe::ProbeResult* any = route ? route : before ? before : after;
    j["address"] = any ? Json(any->peer.address) : Json(nullptr);
    j["interface"] = any ? Json(any->interface.name) : Json(nullptr);
    j["checks"] = c.describe();
    j["min_gbps"] = c.min_gbps ? Json(*c.min_gbps) : Json(nullptr);
    j["max_regression_pct"] = c.max_regression_pct ? Json(*c.max_regression_pct) : Json(nullptr);
    j["before"] = before ? probe_json(*before) : Json(nullptr);
    j["after"] = after ? probe_json(*after) : Json(nullptr);
    j["verdict"] = verdict;
    j["reason"] = reason ? Json(*reason) : Json(nullptr);
    return j;
}

namespace {

// One figure of a probe report for the before/after table ("" when absent).
std::string mtu_cell(const Json& p) {
    if (!p.is_object() || p.at("path_mtu").is_null()) return "";
    const std::string src = text_of(p, "path_mtu_source");
    return text_of(p, "path_mtu") + (src == "interface"    ? ""
                                     : src == "icmp"       ? " (ICMP)"
                                     : src == "black_hole" ? " (black hole)"
                                                           : "");
}
std::string rtt_cell(const Json& p) {
    if (!p.is_object() || !p.at("rtt_ms").is_object()) return "";
    const Json& r = p.at("rtt_ms");
    return ms(num(r, "p50")) + " / " + ms(num(r, "p99"));
}
std::string gbps_cell(const Json& p) {
    if (!p.is_object() || !p.at("throughput").is_object()) return "";
    return fmt::format("{:.2f} Gbit/s", num(p.at("throughput"), "gbps"));
}
std::string retr_cell(const Json& p) {
    if (!p.is_object() || !p.at("throughput").is_object()) return "";
    const std::string r = text_of(p.at("throughput"), "retransmits");
    return r.empty() ? "n/a" : r;
}
std::string iface_mtu_cell(const Json& p) {
    if (!p.is_object()) return "";
    return text_of(p.at("interface"), "mtu");
}

}  // namespace

std::string verify_peer_text(const Json& v, bool color) {
    const Style s{color, 11};
    std::string out;
    std::string peer = text_of(v, "peer");
    if (!text_of(v, "address").empty() && text_of(v, "address") != peer)
        peer += " (" + text_of(v, "address") + ")";
    const std::string verdict = text_of(v, "verdict");
    const std::string shown = verdict == "passed"    ? s.wrap("32", "passed")
                              : verdict == "failed"  ? s.wrap("1;31", "FAILED")
                              : verdict == "dry_run" ? std::string("dry run, nothing probed")
                              : verdict == "pending" ? std::string("pending")
                                                     : std::string("not reached");
    out += fmt::format("{} {} via {}: {}\n", s.wrap("1", "peer check"), peer,
                       text_of(v, "interface").empty() ? "?" : text_of(v, "interface"), shown);
    out += "  checks     " + text_of(v, "checks") + "\n";
    const Json& b = v.contains("before") ? v.at("before") : Json();
    const Json& a = v.contains("after") ? v.at("after") : Json();
    if (b.is_object() || a.is_object()) {
        struct Row {
            const char* name;
            std::string (*cell)(const Json&);
        };
        const Row rows[] = {{"MTU", iface_mtu_cell},
                            {"path MTU", mtu_cell},
                            {"RTT p50/p99", rtt_cell},
                            {"throughput", gbps_cell},
                            {"retransmits", retr_cell}};
        out += fmt::format("  {:<12} {:<24} {}\n", "", "before", "after");
        for (const auto& r : rows) {
            const std::string x = r.cell(b), y = r.cell(a);
            if (x.empty() && y.empty()) continue;
            out += fmt::format("  {:<12} {:<24} {}\n", r.name, x.empty() ? "-" : x,
                               y.empty() ? "-" : y);
        }
    }
    if (!text_of(v, "reason").empty()) out += "  " + text_of(v, "reason") + "\n";
    return out;
}

}  // namespace nictune::report
