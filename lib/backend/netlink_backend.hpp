// The Backend that talks to the kernel: rtnetlink (libnl) for links,
// ethtool netlink (libmnl) for the device families, the GDRVINFO ioctl for
// driver identity, sysfs and the udev hwdb for the PCI function, /proc/sys
// for sysctls and tuned's D-Bus API for the system profile.
//
// Reading many interfaces costs one dump per message family, not one request
// per device, so the cost per interface stays flat as their number grows.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <unordered_map>

#include "backend/backend.hpp"
#include "backend/event_source.hpp"
#include "backend/irq_read.hpp"
#include "backend/system_health.hpp"
#include "ethnl/socket.hpp"
#include "rtnl/link.hpp"
#include "sysinfo/drvinfo.hpp"
#include "sysinfo/hwdb.hpp"
#include "sysinfo/irq.hpp"
#include "sysinfo/procsys.hpp"
#include "sysinfo/queues.hpp"
#include "sysinfo/sysfs.hpp"
#include "tuned/tuned_client.hpp"

namespace nictune {

struct NetlinkBackendOptions {
    std::filesystem::path sysfs_root = "/sys";
    std::filesystem::path procsys_root = "/proc/sys";
    // [irq]: /proc/irq, /proc/interrupts, /proc/PID/comm (irqbalance) and
    // /run/irqbalance (its socket).
    std::filesystem::path proc_root = "/proc";
    std::filesystem::path run_root = "/run";
    tuned::Options tuned;
    // Up to this many named interfaces are read with per-device requests;
    // more (or all) with one dump per family. A dump costs as much for one
    // interface as for all of them (about 6 ms for 1,000 links here, and
    // links created meanwhile interrupt it), a device's requests about 80 us.
    std::size_t per_device_limit = 32;
    // The receive queue of each socket that observes a transaction's change
    // notifications (observe_changes). Notifications that do not fit are
    // lost, and verification reads instead; tests shrink it to get there.
    int observe_queue_bytes = rtnl::Socket::kDefaultEventQueueBytes;
    // Whether a transaction over many of the namespace's links reads them
    // back rather than observing them (read_back_is_cheaper). nictuned does
    // not: its own watcher listens for link changes, so the kernel builds
    // the notifications anyway, and its large transactions come in hotplug
    // bursts, while links are still being created, which restarts a dump.
    bool read_back_many = true;
    // Where the health checks read (tests point them at fixture trees).
    HealthOptions health;
    // Test hook: runs after the link list is known and before the devices
    // are read (lets a test remove an interface in between).
    std::function<void(const std::vector<std::string>& names)> after_list;
};

class NetlinkBackend final : public Backend {
  public:
    // Opens the sockets in the calling thread's network namespace.
    static Result<std::unique_ptr<NetlinkBackend>> open(NetlinkBackendOptions opts = {});

    Result<std::vector<NicState>> read_interfaces(const ReadRequest& req) override;
    Result<SystemState> read_system(const SystemQuery& query) override;
    Result<void> set_device(const NicRef& nic, Section section,
                            std::span<const std::pair<Key, uint64_t>> values) override;
    Result<void> set_features(const NicRef& nic, uint32_t nbits,
                              std::span<const std::pair<std::size_t, bool>> bits) override;
    Result<void> set_sysctl(const std::string& name, const std::string& value) override;
    Result<void> set_tuned_profile(const std::string& profile) override;
    Result<void> set_private_flags(const NicRef& nic, std::span<const PrivateFlag> flags) override;
    Result<void> set_queue(const NicRef& nic, Section section, std::size_t queue,
                           std::string_view what, const Scalar& value) override;
    Result<void> set_rss(const NicRef& nic, std::string_view what,
                         const Scalar& value) override;  // [rss]
    Result<void> set_irq_affinity(const NicRef& nic, unsigned irq, std::string_view cpus) override;
    Result<void> set_irqbalance_banned(const NicRef& nic, std::string_view irqs) override;
    std::vector<Result<void>> set_devices(std::span<const DeviceChange> changes) override;
    std::vector<Result<void>> set_features_many(std::span<const FeatureChange> changes) override;

    bool observe_changes(bool on) override;
    // Many interfaces, at least half of the links of the last link dump:
    // their read-back is one dump per family (netlink_backend.cpp).
    bool read_back_is_cheaper(std::size_t interfaces) const override;
    Observed observed(std::span<const ObserveRequest> wanted) override;
    // Opened on first use: audits that leave health out never pay for it.
    HealthReader* health() override;
    void release_buffers() noexcept override;

    // The running kernel's feature names (profiles may use names newer than
    // the built-in list).
    Result<std::shared_ptr<const FeatureNames>> kernel_feature_names() {
        return eth_->feature_names();
    }

  private:
    NetlinkBackend(NetlinkBackendOptions opts, std::unique_ptr<rtnl::Socket> rt,
                   std::unique_ptr<ethnl::Socket> eth, sysinfo::IoctlSocket io);

    Result<std::vector<NicState>> read_links(const ReadRequest& req);
    Result<std::vector<rtnl::Link>> list_links(const ReadRequest& req);
    Result<std::vector<rtnl::Link>> dump_named_links(const ReadRequest& req);
    Result<void> read_ethtool_dumps(std::vector<NicState>& nics, const ReadRequest& req);
    Result<void> read_ethtool_per_device(std::vector<NicState>& nics, const ReadRequest& req);
    void read_identity(NicState& nic);
    // sysfs queues/, the ethtool private flags and RSS (ioctls), and [irq]
    // (the queue IRQs; /proc/interrupts and irqbalance read once for all,
    // backend/irq_read.hpp), per interface.
    Result<void> read_queues_and_flags(std::vector<NicState>& nics, const ReadRequest& req);
    // Reads what the observer's sockets hold (after each SET batch, so that
    // their queues stay short, and before observed()).
    void drain_observer();

    // The newest notified state of one interface while observing.
    struct Seen {
        NicState state;     // name, ifindex and the notified families
        uint32_t sections;  // ReadRequest::bit() of each family notified
        bool gone;          // RTM_DELLINK seen
    };
    struct Observer {
        std::unique_ptr<EventSource> events;  // RTNLGRP_LINK and the ethtool monitor
        std::unordered_map<int, Seen> seen;
        IrqWritesSeen irqs;  // [irq], as its writes read it back
        bool lost = false;   // a queue overflowed or a message did not decode
        int depth = 0;       // nested observe_changes(true)
    };
    std::unique_ptr<Observer> observer_;
    // The last observer's sources, paused until the next transaction.
    std::unique_ptr<EventSource> spare_events_;
    // The links of the last full link dump; 0 before the first.
    std::size_t links_dumped_ = 0;

    NetlinkBackendOptions opts_;
    std::unique_ptr<rtnl::Socket> rtnl_;
    std::unique_ptr<ethnl::Socket> eth_;
    sysinfo::IoctlSocket ioctl_;
    sysinfo::Sysfs sysfs_;
    sysinfo::QueueFiles queue_files_;
    sysinfo::IrqFiles irq_files_;
    sysinfo::Hwdb hwdb_;
    sysinfo::ProcSys procsys_;
    std::unique_ptr<SystemHealthReader> health_;
};

}  // namespace nictune
