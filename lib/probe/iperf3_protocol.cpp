#include "probe/iperf3_protocol.hpp"

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

namespace nictune::probe::iperf3 {
namespace {

using Json = nlohmann::json;

// A count iperf3 may write as -1 or, through an unsigned conversion, as
// 1.8446744073709552e+19: "none".
std::optional<uint64_t> count_or_none(const Json& j) {
    if (j.is_number_unsigned()) {
        const auto v = j.get<uint64_t>();
        if (v >= (uint64_t{1} << 63)) return std::nullopt;
        return v;
    }
    if (j.is_number_integer()) {
        const auto v = j.get<int64_t>();
        if (v < 0) return std::nullopt;
        return static_cast<uint64_t>(v);
    }
    if (j.is_number_float()) {
        const double v = j.get<double>();
        if (!std::isfinite(v) || v < 0 || v >= 9.2e18) return std::nullopt;
        return static_cast<uint64_t>(v);
    }
    return std::nullopt;
}

std::optional<double> number(const Json& obj, const char* key) {
    auto it = obj.find(key);
    if (it == obj.end() || !it->is_number()) return std::nullopt;
    const double v = it->get<double>();
    if (!std::isfinite(v)) return std::nullopt;
    return v;
}

}  // namespace

std::string make_cookie(const uint8_t (&random)[36]) {
    static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyz234567";
    std::string c(kCookieBytes, '\0');
    for (std::size_t i = 0; i < 36; ++i)
        c[i] = kChars[random[i] % 32];
    return c;
}

std::string parameters_json(const Parameters& p) {
    Json j = {{"tcp", true}, {"omit", 0},       {"time", p.seconds},
              {"num", 0},    {"blockcount", 0}, {"parallel", p.streams}};
    if (p.reverse) j["reverse"] = true;
    j["len"] = kBlockBytes;
    j["pacing_timer"] = 1000;
    // The protocol level spoken (servers only log it).
    j["client_version"] = "3.12";
    return j.dump();
}

std::vector<int> stream_ids(unsigned streams) {
    std::vector<int> ids;
    for (unsigned i = 0; i < streams; ++i)
        ids.push_back(i == 0 ? 1 : static_cast<int>(i) + 2);
    return ids;
}

std::string results_json(const Results& r) {
    Json streams = Json::array();
    for (const auto& s : r.streams)
        streams.push_back({{"id", s.id},
                           {"bytes", s.bytes},
                           {"retransmits", s.retransmits ? Json(*s.retransmits) : Json(-1)},
                           {"jitter", 0},
                           {"errors", 0},
                           {"packets", 0},
                           {"start_time", 0},
                           {"end_time", s.seconds}});
    Json j = {{"cpu_util_total", r.cpu_total},
              {"cpu_util_user", r.cpu_user},
              {"cpu_util_system", r.cpu_system},
              {"sender_has_retransmits", r.sender_has_retransmits ? 1 : -1},
              {"streams", streams}};
    return j.dump();
}

Result<Results> parse_results(std::string_view text) {
    constexpr const char* kWhere = "iperf3 results";
    const Json j = Json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return fail(Errc::Io, kWhere, "not a JSON object");
    Results r;
    const auto total = number(j, "cpu_util_total");
    const auto user = number(j, "cpu_util_user");
    const auto sys = number(j, "cpu_util_system");
    if (!total || !user || !sys || !j.contains("sender_has_retransmits"))
        return fail(Errc::Io, kWhere, "CPU or retransmission fields missing");
    r.cpu_total = *total;
    r.cpu_user = *user;
    r.cpu_system = *sys;
    r.sender_has_retransmits = count_or_none(j.at("sender_has_retransmits")).value_or(0) == 1;
    auto streams = j.find("streams");
    if (streams == j.end() || !streams->is_array())
        return fail(Errc::Io, kWhere, "no \"streams\" array");
    for (const auto& s : *streams) {
        if (!s.is_object()) return fail(Errc::Io, kWhere, "a stream that is not an object");
        const auto id = number(s, "id");
        auto bytes_it = s.find("bytes");
        if (!id || bytes_it == s.end() || !s.contains("retransmits"))
            return fail(Errc::Io, kWhere, "a stream without id, bytes or retransmits");
        const auto bytes = count_or_none(*bytes_it);
        if (!bytes) return fail(Errc::Io, kWhere, "a stream with a negative byte count");
        StreamResult sr;
        sr.id = static_cast<int>(*id);
        sr.bytes = *bytes;
        sr.retransmits = count_or_none(s.at("retransmits"));
        const auto start = number(s, "start_time").value_or(0);
        const auto end = number(s, "end_time").value_or(0);
        sr.seconds = end > start ? end - start : 0;
        r.streams.push_back(sr);
    }
    return r;
}

std::string server_error_text(int32_t code, int32_t err) {
    std::string what;
    switch (code) {
        case 27:
            what = "the requested rate exceeds the server's --server-bitrate-limit";
            break;
        case 102:
            what = "the server could not listen for the test's streams";
            break;
        case 104:
            what = "the server could not accept a stream";
            break;
        case 114:
            what = "the server could not read the test's parameters";
            break;
        case 124:
        case 130:
            what = "the server could not set its socket buffers";
            break;
        case 134:
            what = "the server could not set the TCP congestion algorithm";
            break;
        case 142:
            what =
                "the server requires authentication (iperf3 --username / RSA keys), which "
                "nictune does not offer";
            break;
        default:
            what = "the server reported iperf3 error " + std::to_string(code);
    }
    if (err > 0 && err < 4096) what += std::string(" (") + std::strerror(err) + ")";
    return what;
}

}  // namespace nictune::probe::iperf3
