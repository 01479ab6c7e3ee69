// iperf3's control protocol, as a stock `iperf3 -s` (3.x; Debian 12 ships
// 3.12) speaks it, without I/O. The client:
//  1. connects to the server's port and sends a 37-byte cookie (36
//     characters of [a-z2-7] and a NUL) that names the test;
//  2. reads state bytes from the server: PARAM_EXCHANGE -> it sends the
//     test's parameters (a 4-byte big-endian length, then JSON);
//     CREATE_STREAMS -> it opens one TCP connection per stream to the same
//     port, each starting with the cookie; TEST_START, TEST_RUNNING -> data
//     flows (client to server, or server to client with "reverse");
//  3. after the test's time sends TEST_END; on EXCHANGE_RESULTS it sends its
//     results (JSON as above) and reads the server's; on DISPLAY_RESULTS it
//     sends IPERF_DONE and closes.
// A busy server answers the cookie with ACCESS_DENIED; a failing one with
// SERVER_ERROR and two 32-bit numbers (its error code and errno).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace nictune::probe::iperf3 {

enum State : int8_t {
    kTestStart = 1,
    kTestRunning = 2,
    kTestEnd = 4,
    kParamExchange = 9,
    kCreateStreams = 10,
    kServerTerminate = 11,
    kClientTerminate = 12,
    kExchangeResults = 13,
    kDisplayResults = 14,
    kIperfDone = 16,
    kAccessDenied = -1,
    kServerError = -2,
};

constexpr std::size_t kCookieBytes = 37;         // with the NUL
constexpr std::size_t kBlockBytes = 128 * 1024;  // iperf3's TCP default ("len")
// Longer JSON than this from a server is refused (3.12's results are about
// 300 bytes per stream).
constexpr uint32_t kMaxJsonBytes = 1 << 20;

// "the test's cookie" from 36 random bytes: characters of [a-z2-7], then NUL.
std::string make_cookie(const uint8_t (&random)[36]);

struct Parameters {
    unsigned seconds = 5;
    unsigned streams = 1;
    bool reverse = false;
};
// The parameters message's JSON: what iperf3 3.12's own client sends for
// `-t SECONDS -P STREAMS [-R]` (TCP, 128 KiB blocks, no omit).
std::string parameters_json(const Parameters& p);

// iperf3 numbers its streams 1, 3, 4, 5, ... (its own source says so, and
// keeps it for compatibility); results refer to streams by these ids.
std::vector<int> stream_ids(unsigned streams);

struct StreamResult {
    int id = 0;
    uint64_t bytes = 0;
    std::optional<uint64_t> retransmits;  // absent when the side had none to report
    double seconds = 0;                   // end_time - start_time
};

struct Results {
    double cpu_total = 0;
    double cpu_user = 0;
    double cpu_system = 0;
    bool sender_has_retransmits = false;
    std::vector<StreamResult> streams;
};

// Our results message (what the server's get_results() requires).
std::string results_json(const Results& r);
// The server's results message. Numbers iperf3 writes for "none" (-1, or
// 2^64-1 printed as a double) become nullopt; a message without the fields
// 3.12 itself requires is an error.
Result<Results> parse_results(std::string_view json);

// What iperf3's error code in a SERVER_ERROR message means, in words.
std::string server_error_text(int32_t code, int32_t err);

}  // namespace nictune::probe::iperf3
