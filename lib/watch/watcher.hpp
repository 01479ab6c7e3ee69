// What makes tuning last: bound profiles applied at start, when a matching
// NIC appears (hotplug, driver reload) and, with enforce, when a bound
// setting drifts. Interfaces are tracked by ifindex, not by name.
//
// The watcher is fed events (links, ethtool notifications, a resync after a
// netlink overrun) and decides; it knows nothing about sockets or D-Bus, so
// it is tested with the fake backend.
//
// Drift is a difference from the values read back after nictune's last
// apply (the baseline), not from the profile: a value the driver adjusted is
// the baseline, so enforcement never loops on it, and nictune's own changes
// (which produce notifications too) never look like drift. A feature whose
// request still stands (its wanted bit) while the kernel keeps it at the
// other value is blocked, not drift: it is listed and logged once, never
// re-applied (the SET would change nothing).
//
// Queue placement ([rps], [xps], later [irq]) is different: the kernel
// resets it without anyone asking when it rebuilds an interface's queues
// (a channel change frees and re-creates them with empty masks) or the
// driver requests its IRQs again (link up after down, a ring or channel
// change, a reload), and nothing announces a mask written by another tool.
// So the watcher re-checks the placement sections of a bound interface
// after such an event (and re-applies those sections alone, whatever
// `enforce` says: the profile still asks for them, nobody changed them on
// purpose), and reads them on a timer, a few interfaces at a time, for the
// drift check.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/manager.hpp"
#include "model/log_record.hpp"
#include "watch/baseline.hpp"
#include "watch/config.hpp"

namespace nictune::watch {

// The queue-placement sections (ReadRequest::bit()s): what the watcher
// re-applies after a queue rebuild (the driver requested its IRQs again,
// or the queues were made anew) and checks on a timer.
inline constexpr uint32_t kPlacementSections = ReadRequest::bit(Section::Irq) |
                                               ReadRequest::bit(Section::Rps) |
                                               ReadRequest::bit(Section::Xps);

// What nictuned knows of one interface. Kept small: a host may have
// thousands (SR-IOV VFs), and this is most of the daemon's heap.
struct Tracked {
    int ifindex = 0;
    std::string name;                   // text form (escape_name), as every name
    std::vector<std::string> altnames;  // the kernel's alternative names
    // In the watcher's configuration: set_config() forgets every binding
    // before it replaces that, so this never dangles.
    const Binding* binding = nullptr;
    std::string profile;               // last applied (binding or request)
    std::string transaction;           // last transaction
    std::string last_result;           // tx_result_name or "" before any
    int64_t last_result_at = 0;        // when last_result was set, Unix seconds
    Baseline baseline;                 // the values after the last apply, shared
    std::vector<std::string> drifted;  // keys that differ now
    // At most kMaxEnforcementsPerMinute entries, oldest first. A vector: an
    // empty std::deque already allocates ~600 bytes, per tracked interface.
    std::vector<std::chrono::steady_clock::time_point> enforcements;
    bool enforcement_suspended = false;
    // A transaction on it waits for confirmation (a pending apply): the
    // notifications meanwhile are its own changes, not drift; its end
    // (note_request) settles the baseline.
    bool held = false;
    // IFF_UP as the last RTM_NEWLINK said (unknown before the first one):
    // up after down is a queue rebuild (the driver requests its IRQs again).
    std::optional<bool> up;

    // The baseline's value of `key`, or nullptr.
    [[nodiscard]] const Scalar* expected(std::string_view key) const;
};

struct WatcherEvents {
    // transaction, interface, profile, result, reason (boot, hotplug, rename, drift, request)
    std::function<void(const std::string&, const std::string&, const std::string&,
                       const std::string&, const std::string&)>
        applied;
    // interface, key, expected, actual, enforced
    std::function<void(const std::string&, const std::string&, const std::string&,
                       const std::string&, bool)>
        drift;
    // A binding with verify_peer applied and verified a transaction and
    // holds it open (ApplyOptions::hold): the daemon keeps it pending until
    // nictune-verify@.service confirms it (service/manager_object.hpp),
    // which notes the result back here (note_request).
    std::function<void(std::unique_ptr<HeldTransaction>, const Binding&, const std::string& reason)>
        held;
    // What the watcher did and why, with the journal's fields (nictuned
    // passes service::log); empty: not logged.
    LogSink log;
};

class Watcher {
  public:
    // At most this many drift repairs per interface per minute; past it the
    // binding's enforcement pauses (something keeps changing the setting).
    static constexpr std::size_t kMaxEnforcementsPerMinute = 5;
    // New links are read and tuned this many at a time.
    static constexpr std::size_t kReadChunk = 32;

    Watcher(Manager& manager, WatcherEvents events);

    // Bindings in force from now on, with the bound profiles loaded and
    // validated by the caller (a broken file on disk cannot replace them).
    void set_config(DaemonConfig cfg, std::map<std::string, Profile> profiles);
    [[nodiscard]] const DaemonConfig& config() const { return cfg_; }

    // Reads every interface and applies the bindings (start, resync).
    void apply_all(const std::string& reason);
    // A link appeared, changed or was renamed (deleted = RTM_DELLINK). A new
    // link is only noted: process() reads and tunes every link that appeared
    // since the last call together.
    // `link`: the link's [link] values the RTM_NEWLINK carried, which the
    // drift check then uses instead of reading the link again; `altnames`:
    // its alternative names (a binding may match one that appears later);
    // `flags`: its IFF_* flags (IFF_UP after down: queues_rebuilt).
    void link_event(int ifindex, const std::string& name, bool deleted,
                    const DeviceValues* link = nullptr,
                    const std::vector<std::string>* altnames = nullptr,
                    std::optional<uint32_t> flags = std::nullopt);
    // Whether the link is tracked (read and known to the watcher).
    [[nodiscard]] bool tracks(int ifindex) const { return tracked_.contains(ifindex); }
    // An RTM_NEWLINK of a link not tracked, with what it said of the link
    // (the backend's link_state()): noted as link_event() notes it, and its
    // read then takes the link from it (ReadRequest::linked) instead of
    // asking the kernel for it again, one request less under the RTNL lock
    // per new link.
    void link_seen(NicState link);
    // The interface's queues may have been rebuilt or its IRQs requested
    // again (`why`: "link up", "channels changed", "rings changed"):
    // process() re-checks the placement sections of its binding's profile
    // and re-applies those that differ.
    void queues_rebuilt(int ifindex, const std::string& why);
    // Something about this interface changed (ethtool notification) and the
    // notification's content is unknown: the drift check reads it.
    void device_changed(int ifindex);
    // An ethtool notification with the family's new state (values of
    // `section`, or the features): the drift check compares it, no read.
    void device_notified(int ifindex, Section section, const DeviceValues& values);
    void features_notified(int ifindex, FeatureSet features);
    // Netlink dropped notifications: forget what we knew, re-read everything.
    void resync();
    // Handles what the events above noted: new links (one read, one
    // transaction per bound profile), then drift checks. The daemon calls it
    // after it has drained its sockets.
    void process();
    // An Apply or Rollback request through D-Bus touched these interfaces
    // (`reason`: request, or how a pending transaction ended: confirmed,
    // aborted, timeout, disconnect, stopping).
    void note_request(const ApplyResult& r, const std::string& reason = "request");
    void note_rollback(const std::string& interface);

    [[nodiscard]] const std::map<int, Tracked>& tracked() const { return tracked_; }
    // Work left for process(): the daemon calls it again shortly, not only
    // on the next event (a read that failed while links kept changing).
    [[nodiscard]] bool pending() const {
        return !dirty_.empty() || !appeared_.empty() || resync_again_ || !rebuilt_.empty();
    }
    // Milliseconds until process() is due to read the placement of the next
    // interfaces (0: now), -1 when no binding's profile places queues.
    [[nodiscard]] int placement_timeout_ms() const;

    // How often the placement drift check runs ([daemon]
    // placement_check_interval, set by set_config), and how many interfaces
    // it reads each time (round robin: with more placed interfaces than
    // that, each is read every ceil(N / kPlacementChunk) intervals).
    std::chrono::milliseconds placement_interval = std::chrono::seconds(10);
    static constexpr std::size_t kPlacementChunk = 32;

    // Test hook: the clock used for the enforcement rate limit.
    std::function<std::chrono::steady_clock::time_point()> now = [] {
        return std::chrono::steady_clock::now();
    };

  private:
    void log(Level level, std::string_view message, const LogFields& fields = {}) const {
        if (events_.log) events_.log(level, message, fields);
    }
    void apply_binding(Tracked& t, const NicState& st, const std::string& reason);
    // Applies the bindings of freshly read, tracked interfaces: those bound
    // to one profile in one transaction (see watcher.cpp).
    void apply_bindings(std::vector<NicState> nics, const std::string& reason);
    // One transaction for `group` (the interfaces `members`, by ifindex);
    // true when it applied (each recorded).
    bool apply_together(const std::string& profile, std::vector<NicState> group,
                        const std::vector<int>& members, const std::string& reason);
    // The bound profile: the validated copy from set_config, else loaded from
    // disk into `holder`.
    Result<const Profile*> bound_profile(const std::string& name, std::optional<Profile>& holder);
    // Reads and tunes the links noted in appeared_.
    void take_appeared();
    // What record() keeps of a result besides an interface's baseline.
    struct Recorded {
        Recorded() = default;
        explicit Recorded(const ApplyResult& r);
        std::string transaction;
        std::string profile;
        TxResult result = TxResult::Applied;
        std::string check;  // the pending check's name, when there is one
        std::string error;  // the error's text, when there is one
    };
    // Notes the result on `t` (`baseline` after an Applied one), logs it
    // and sends the Applied signal.
    void record(Tracked& t, const ApplyResult& r, const std::string& reason);
    void record(Tracked& t, const Recorded& o, std::optional<std::vector<BaselineValue>> baseline,
                const std::string& reason);
    // Reads the interfaces noted in dirty_ and checks each for drift.
    void check_dirty();
    // Compares the baseline keys of `sections` (ReadRequest::bit()s).
    void check_drift(Tracked& t, const NicState& now,
                     uint32_t sections = ReadRequest::kAllSections);
    // Reads the interfaces of `req` (the tracked `indices`) and checks the
    // keys of `sections` of each still tracked; `what` names the read in
    // the warning when it fails.
    void read_and_check(const ReadRequest& req, const std::vector<int>& indices, uint32_t sections,
                        std::string_view what);
    // Re-checks the placement of the interfaces noted in rebuilt_.
    void take_rebuilt();
    // Plans the binding's profile on `t` and applies its placement steps
    // that differ; the baseline's placement keys follow the plan (queues
    // that vanished leave it, new ones join).
    void reapply_placement(Tracked& t, const std::string& why);
    // The timer's drift check of the next kPlacementChunk placed interfaces.
    void check_placement();
    // A link that appeared and is not read yet: its latest name, and what
    // its latest RTM_NEWLINK said of it when link_seen() noted it.
    struct Appeared {
        std::string name;
        std::optional<NicState> link;
    };
    // Reads one chunk of appeared_.
    Result<std::vector<NicState>> read_new(std::span<std::pair<int, Appeared>> chunk);
    // The tracked interface is now called `name`; its saved originals move
    // (under the locks of both names, as any change to the state directory).
    void follow_rename(Tracked& t, const std::string& name);
    // Starts tracking a link just read.
    Tracked& track(const NicState& st);

    Manager& manager_;
    WatcherEvents events_;
    DaemonConfig cfg_;
    std::map<std::string, Profile> profiles_;
    // What a new link's read asks for: the families the bound profiles set
    // (every family if one of them is not loaded yet).
    uint32_t read_sections_ = ReadRequest::kAllSections;
    std::map<int, Tracked> tracked_;
    BaselinePool baselines_;  // the tracked interfaces' baselines
    std::set<int> dirty_;
    // What the notifications since the last drift check said, per dirty
    // interface: the families notified and their state. A family nobody
    // notified did not change. Interfaces in must_read_ (a change whose
    // content is unknown) are read instead.
    struct Notified {
        NicState state;
        uint32_t sections = 0;
    };
    std::map<int, Notified> notified_;
    std::set<int> must_read_;
    std::map<int, Appeared> appeared_;    // new links not read yet, by ifindex
    int read_retries_ = 0;                // failed reads of appeared_ in a row
    bool resync_again_ = false;           // the last resync could not read
    std::map<int, std::string> rebuilt_;  // queues rebuilt: ifindex -> why
    // Some binding's profile sets a placement section (or is not loaded yet).
    bool places_ = false;
    std::chrono::steady_clock::time_point next_placement_{};
    int placement_cursor_ = 0;  // the timer's check goes on after this ifindex
};

}  // namespace nictune::watch
