// An in-memory kernel for unit tests of the logic above the Backend: reads
// return the stored NicStates, SETs change them, and failures (errno plus an
// extack text) can be injected at any call.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.hpp"

namespace nictune::test {

class FakeBackend : public Backend {
  public:
    std::vector<NicState> nics;
    SystemState system;

    struct Call {
        std::string what;  // "set_device link p4p1", "set_features p4p1", "set_sysctl NAME",
                           // "set_tuned NAME"
    };
    std::vector<Call> calls;  // every SET, in order

    // The n-th SET (1-based, counting every set_* call) fails with errno and extack.
    void fail_call(int n, int err, std::string extack = {}) {
        failures_[n] = {err, std::move(extack)};
    }
    // The n-th SET (a device or features one) is carried out, but its answer
    // never comes: it fails with Errc::Io, as a timed-out window does.
    void lose_answer(int n) { lost_.push_back(n); }
    // SETs touching `key` are accepted but change nothing.
    void ignore(Key key) { ignored_.push_back(key); }
    // The driver settles on another value for `key`.
    void adjust(Key key, std::function<uint64_t(uint64_t)> f) { adjust_[key] = std::move(f); }
    // Features the kernel keeps off (by name): a SET turns their wanted bit
    // on but not the active one (a dependency, an upper device, XDP).
    std::vector<std::string> kept_off;
    // SETs of this interface and section fail with EINVAL (a driver that
    // refuses a value), whenever they come.
    std::function<bool(const std::string& name, Section section)> fail_set;
    // read_interfaces calls so far, and what each asked for. A read
    // without identity returns no driver, one without Section::Features no
    // feature set (as the real one does).
    std::size_t read_calls = 0;
    std::vector<ReadRequest> requests;
    // The next this many read_interfaces calls fail (a dump the kernel kept
    // interrupting), once read_calls has passed fail_reads_after.
    int fail_reads = 0;
    std::size_t fail_reads_after = 0;
    // The interface disappears at the n-th SET.
    void vanish_at_call(int n, std::string name) { vanish_ = {n, std::move(name)}; }
    // The interface disappears after the n-th SET succeeded, before the
    // next read: between a transaction's writes and their read-back.
    void vanish_after_set(int n, std::string name) { vanish_after_ = {n, std::move(name)}; }

    // Change notifications, as the kernel sends them: with `notifies` set,
    // observe_changes() works and a SET that changed something marks its
    // interface and family as notified (one that changed nothing does not).
    bool notifies = false;
    std::size_t observed_calls = 0;

    NicState* nic(const std::string& name);

    Result<std::vector<NicState>> read_interfaces(const ReadRequest& req) override;
    Result<SystemState> read_system(const SystemQuery& query) override;
    Result<void> set_device(const NicRef& nic, Section section,
                            std::span<const std::pair<Key, uint64_t>> values) override;
    Result<void> set_features(const NicRef& nic, uint32_t nbits,
                              std::span<const std::pair<std::size_t, bool>> bits) override;
    // Unknown flag names fail with EINVAL, as the kernel's bitset parser does.
    Result<void> set_private_flags(const NicRef& nic, std::span<const PrivateFlag> flags) override;
    Result<void> set_queue(const NicRef& nic, Section section, std::size_t queue,
                           std::string_view what, const Scalar& value) override;
    // [rss]: as the kernel's ethtool_set_rxfh and the drivers'
    // set_rxnfc: a table naming a queue at or past rx_rings fails with
    // EINVAL, a flow type the device does not report with EOPNOTSUPP,
    // "default" spreads over rx_rings. A channel change (set_device) sets
    // rx_rings to combined + rx and, while the table is not the operator's
    // (never set, or set to "default"), spreads it again, as ixgbe and i40e do.
    Result<void> set_rss(const NicRef& nic, std::string_view what, const Scalar& value) override;
    // [irq]: IRQs in managed_irqs answer EIO (Errc::Unsupported), as the
    // kernel's irq_can_set_affinity_usr() does; the effective affinity
    // becomes the list's first CPU (as x86's vector allocation picks one).
    // irqbalance is machine wide: a ban changes every interface's copy.
    std::vector<unsigned> managed_irqs;
    Result<void> set_irq_affinity(const NicRef& nic, unsigned irq, std::string_view cpus) override;
    Result<void> set_irqbalance_banned(const NicRef& nic, std::string_view irqs) override;
    Result<void> set_sysctl(const std::string& name, const std::string& value) override;
    Result<void> set_tuned_profile(const std::string& profile) override;
    bool observe_changes(bool on) override;
    Observed observed(std::span<const ObserveRequest> wanted) override;

    // Interfaces whose table the operator set (the kernel's IFF_RXFH_CONFIGURED).
    std::vector<int> rss_configured;

  private:
    void notify(int ifindex, uint32_t section_bit);
    int observing_ = 0;                 // nested observe_changes(true), as the real one counts
    std::map<int, uint32_t> notified_;  // ifindex -> ReadRequest::bit()s
    Result<void> before_set(const std::string& what);
    NicState* by_index(int ifindex);
    int set_calls_ = 0;
    std::map<int, std::pair<int, std::string>> failures_;
    std::vector<int> lost_;
    Result<void> after_set(const std::string& name) const;
    std::vector<Key> ignored_;
    std::map<Key, std::function<uint64_t(uint64_t)>> adjust_;
    std::optional<std::pair<int, std::string>> vanish_;
    std::optional<std::pair<int, std::string>> vanish_after_;
};

}  // namespace nictune::test
