// nictune_bench_micro: Google Benchmark for the netlink codecs (on the byte
// fixtures captured from a real kernel, tests/data/) and the profile parser
// (on the shipped profiles). Built by bench/CMakeLists.txt; bench/run runs it.
#include <benchmark/benchmark.h>
#include <linux/netlink.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ethnl/codecs.hpp"
#include "profile/facts.hpp"
#include "profile/loader.hpp"
#include "rtnl/link.hpp"

namespace {

using nictune::Section;

// Message bytes in 8-byte aligned storage, as a receive buffer would be.
class Wire {
  public:
    explicit Wire(const std::vector<uint8_t>& bytes) : words_((bytes.size() + 7) / 8) {
        std::memcpy(words_.data(), bytes.data(), bytes.size());
    }
    [[nodiscard]] const nlmsghdr* hdr() const {
        return reinterpret_cast<const nlmsghdr*>(words_.data());
    }

  private:
    std::vector<uint64_t> words_;
};

[[noreturn]] void missing(const std::string& path) {
    std::fprintf(stderr, "nictune_bench_micro: cannot read %s\n", path.c_str());
    std::exit(2);
}

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) missing(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

Wire read_bin(const std::string& name) {
    const std::string text = read_text(std::string(NICTUNE_BENCH_TEST_DATA) + "/" + name);
    return Wire(std::vector<uint8_t>(text.begin(), text.end()));
}

Wire read_hex(const std::string& name) {
    std::istringstream in(read_text(std::string(NICTUNE_BENCH_TEST_DATA) + "/" + name));
    std::vector<uint8_t> out;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream words(line);
        std::string byte;
        while (words >> byte)
            out.push_back(static_cast<uint8_t>(std::stoul(byte, nullptr, 16)));
    }
    return Wire(out);
}

void decode_settings(benchmark::State& state, Section section, const char* file) {
    const Wire w = read_bin(file);
    if (!nictune::ethnl::decode_settings(section, w.hdr())) state.SkipWithError("does not decode");
    for (auto _ : state) {
        auto r = nictune::ethnl::decode_settings(section, w.hdr());
        benchmark::DoNotOptimize(r);
    }
    state.SetBytesProcessed(state.iterations() * w.hdr()->nlmsg_len);
}

void BM_DecodeCoalesce(benchmark::State& state) {
    decode_settings(state, Section::Coalesce, "ethnl/eth0_coalesce.bin");
}
BENCHMARK(BM_DecodeCoalesce);

void BM_DecodeRings(benchmark::State& state) {
    decode_settings(state, Section::Rings, "ethnl/eth0_rings.bin");
}
BENCHMARK(BM_DecodeRings);

void BM_DecodeChannels(benchmark::State& state) {
    decode_settings(state, Section::Channels, "ethnl/eth0_channels.bin");
}
BENCHMARK(BM_DecodeChannels);

void BM_DecodeLinkmodes(benchmark::State& state) {
    decode_settings(state, Section::Link, "ethnl/eth0_linkmodes.bin");
}
BENCHMARK(BM_DecodeLinkmodes);

void BM_DecodeFeatures(benchmark::State& state) {
    const Wire w = read_bin("ethnl/eth0_features.bin");
    if (!nictune::ethnl::decode_features(w.hdr())) state.SkipWithError("does not decode");
    for (auto _ : state) {
        auto r = nictune::ethnl::decode_features(w.hdr());
        benchmark::DoNotOptimize(r);
    }
    state.SetBytesProcessed(state.iterations() * w.hdr()->nlmsg_len);
}
BENCHMARK(BM_DecodeFeatures);

void BM_DecodeFeatureNames(benchmark::State& state) {
    const Wire w = read_bin("ethnl/strset_features.bin");
    if (!nictune::ethnl::decode_feature_strings(w.hdr())) state.SkipWithError("does not decode");
    for (auto _ : state) {
        auto r = nictune::ethnl::decode_feature_strings(w.hdr());
        benchmark::DoNotOptimize(r);
    }
    state.SetBytesProcessed(state.iterations() * w.hdr()->nlmsg_len);
}
BENCHMARK(BM_DecodeFeatureNames);

void BM_DecodeNewlink(benchmark::State& state) {
    const Wire w = read_hex("rtnl/eth0-newlink.hex");
    if (!nictune::rtnl::decode_link(w.hdr())) state.SkipWithError("does not decode");
    for (auto _ : state) {
        auto r = nictune::rtnl::decode_link(w.hdr());
        benchmark::DoNotOptimize(r);
    }
    state.SetBytesProcessed(state.iterations() * w.hdr()->nlmsg_len);
}
BENCHMARK(BM_DecodeNewlink);

void parse_profile(benchmark::State& state, const char* name) {
    const std::string file = std::string(NICTUNE_BENCH_PROFILES) + "/" + name;
    const std::string text = read_text(file);
    if (auto p = nictune::profile::parse(text, file); !p)
        state.SkipWithError(p.error().str().c_str());
    for (auto _ : state) {
        auto p = nictune::profile::parse(text, file);
        benchmark::DoNotOptimize(p);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}

void BM_ParseProfileX520LowLatency(benchmark::State& state) {
    parse_profile(state, "x520-lowlatency.toml");
}
BENCHMARK(BM_ParseProfileX520LowLatency);

void BM_ParseProfileJumbo(benchmark::State& state) {
    parse_profile(state, "jumbo-9014.toml");
}
BENCHMARK(BM_ParseProfileJumbo);

void BM_ParseDriverFacts(benchmark::State& state) {
    const std::string file = std::string(NICTUNE_BENCH_PROFILES) + "/facts/driver-facts.toml";
    const std::string text = read_text(file);
    if (auto f = nictune::FactsBook::parse(text, file); !f)
        state.SkipWithError(f.error().str().c_str());
    for (auto _ : state) {
        auto f = nictune::FactsBook::parse(text, file);
        benchmark::DoNotOptimize(f);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ParseDriverFacts);

}  // namespace

BENCHMARK_MAIN();
