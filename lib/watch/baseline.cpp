#include "watch/baseline.hpp"

#include <functional>
#include <set>

namespace nictune::watch {

const std::string* setting_key(std::string_view path) {
    static std::set<std::string, std::less<>> pool;
    auto it = pool.find(path);
    if (it == pool.end()) it = pool.emplace(path).first;
    return &*it;
}

const Baseline::Values& Baseline::values() const {
    static const Values none;
    return values_ ? *values_ : none;
}

const Scalar* Baseline::find(std::string_view key) const {
    for (const auto& b : values())
        if (*b.key == key) return &b.value;
    return nullptr;
}

namespace {

std::size_t hash_of(const Baseline::Values& values) {
    std::size_t h = values.size();
    for (const auto& v : values) {
        // boost's hash_combine: order matters, as it does for equality.
        h ^= std::hash<const std::string*>{}(v.key) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
        h ^= std::hash<Scalar>{}(v.value) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    }
    return h;
}

}  // namespace

Baseline BaselinePool::intern(const Baseline::Values& values) {
    if (values.empty()) return {};
    const std::size_t h = hash_of(values);
    auto [from, to] = entries_.equal_range(h);
    for (auto it = from; it != to;) {
        if (auto held = it->second.lock()) {
            if (*held == values) return Baseline(std::move(held));
            ++it;
        } else {
            it = entries_.erase(it);
        }
    }
    if (entries_.size() >= 2 * live_after_sweep_ + 16) {
        std::erase_if(entries_, [](const auto& e) { return e.second.expired(); });
        live_after_sweep_ = entries_.size();
    }
    // Exactly sized: the caller's vector may have been reserved for more.
    auto block = std::make_shared<const Baseline::Values>(values.begin(), values.end());
    entries_.emplace(h, block);
    return Baseline(std::move(block));
}

}  // namespace nictune::watch
