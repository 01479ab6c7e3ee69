// [irq]: the profile keys, the queue IRQs and NUMA node read from a fixture
// sysfs/proc tree, irqbalance's socket protocol against a stand-in server
// (irqbalance itself never runs on the host), and plan, apply, EIO skip and
// rollback over the fake backend. The real kernel's side (e1000e's MSI-X
// vectors) is the VM check vm_e1000e_irq_affinity.
#include "sysinfo/irq.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "backend/irq_read.hpp"
#include "engine/transaction.hpp"
#include "fakes/fake_backend.hpp"
#include "fakes/states.hpp"
#include "model/cpulist.hpp"
#include "model/irq.hpp"
#include "profile/loader.hpp"
#include "report/json_report.hpp"
#include "support/profile_text.hpp"
#include "sysinfo/sysfs.hpp"

namespace nictune {
namespace {
using ::nictune::test::profile_of;
namespace fs = std::filesystem;

std::string refused(const std::string& text) {
    auto p = profile::parse(text, "p.toml");
    return p ? std::string("accepted") : p.error().str();
}

TEST(IrqProfile, ReadsPolicyOrCpuList) {
    auto local = profile_of("[irq]\npolicy = \"local\"\n");
    ASSERT_TRUE(local.irq);
    EXPECT_EQ(local.irq->policy, IrqRequest::Policy::Local);
    auto all = profile_of("[irq]\npolicy = \"all\"\n");
    EXPECT_EQ(all.irq->policy, IrqRequest::Policy::All);
    auto cpus = profile_of("[irq]\ncpus = \"3,1-2\"\n");
    EXPECT_EQ(cpus.irq->policy, IrqRequest::Policy::Cpus);
    EXPECT_EQ(cpus.irq->cpus, (std::vector<unsigned>{1, 2, 3}));
    EXPECT_FALSE(local.empty());
}

TEST(IrqProfile, RefusesWhatIsNotAPolicyOrCpuListNamingTheSpot) {
    EXPECT_NE(refused("[irq]\npolicy = \"remote\"\n")
                  .find("p.toml:2:10: irq.policy: 'remote' is not a policy"),
              std::string::npos)
        << refused("[irq]\npolicy = \"remote\"\n");
    EXPECT_NE(refused("[irq]\ncpus = \"\"\n").find("p.toml:2:8: irq.cpus: '' is not a CPU list"),
              std::string::npos)
        << refused("[irq]\ncpus = \"\"\n");
    EXPECT_NE(refused("[irq]\npolicy = \"all\"\ncpus = \"1\"\n").find("not both"),
              std::string::npos);
    EXPECT_NE(refused("[irq]\npolicy = 1\n").find("irq.policy"), std::string::npos);
    EXPECT_NE(refused("[irq]\ncpu = \"1\"\n").find("unknown key 'cpu' in [irq]"),
              std::string::npos);
}

TEST(IrqNames, QueueVectorsOfTheIntelDriversAndVirtioButNotTheLinkVector) {
    for (const char* q : {"eth1-rx-0", "eth1-tx-0", "p4p1-TxRx-3", "i40e-p5p1-TxRx-12",
                          "virtio2-input.0", "virtio2-output.3"})
        EXPECT_TRUE(sysinfo::is_queue_irq_name(q)) << q;
    for (const char* other : {"eth1", "p4p1", "i40e-0000:03:00.0:misc", "i40e-p5p1:fdir",
                              "virtio2-config", "ahci[0000:00:1f.2]"})
        EXPECT_FALSE(sysinfo::is_queue_irq_name(other)) << other;
}

TEST(IrqbalanceProtocol, ReadsTheBannedIrqsOfSetupAndWritesTheBanMessage) {
    EXPECT_EQ(
        sysinfo::parse_irqbalance_setup(
            "SLEEP 10 IRQ 34 LOAD 0 DIFF 0 CLASS 0 IRQ 7 LOAD 5 DIFF 1 CLASS 2 BANNED 0000000f"),
        (std::vector<unsigned>{7, 34}));
    EXPECT_EQ(sysinfo::parse_irqbalance_setup("SLEEP 10 BANNED 00000000"), std::vector<unsigned>{});
    EXPECT_EQ(irqbalance_ban_message({35, 34, 34, 0}), "settings ban irqs 34 35");
    EXPECT_EQ(irqbalance_ban_message({}), "settings ban irqs NONE");
}

// A stand-in for irqbalance 1.9's socket (irqbalance.c sock_handle): one
// message per connection, from uid 0 only (SCM_CREDENTIALS), "setup" answered
// with the banned IRQs, "settings ban irqs" replacing them; then it closes.
class StandInIrqbalance {
  public:
    StandInIrqbalance(const fs::path& path, std::vector<unsigned> banned)
        : path_(path), banned_(std::move(banned)) {
        fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
        EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
        int on = 1;
        ::setsockopt(fd_, SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
        EXPECT_EQ(::listen(fd_, 4), 0);
        thread_ = std::thread([this] { serve(); });
    }
    ~StandInIrqbalance() {
        stop_ = true;
        ::shutdown(fd_, SHUT_RDWR);
        thread_.join();
        ::close(fd_);
    }
    std::vector<std::string> messages() {
        std::lock_guard g(mu_);
        return messages_;
    }
    std::vector<unsigned> banned() {
        std::lock_guard g(mu_);
        return banned_;
    }
    bool without_credentials = false;

  private:
    void serve() {
        while (!stop_) {
            const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
            if (c < 0) return;
            char buf[500];
            alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
            iovec iov{buf, sizeof buf};
            msghdr mh{};
            mh.msg_iov = &iov;
            mh.msg_iovlen = 1;
            mh.msg_control = control;
            mh.msg_controllen = sizeof control;
            const ssize_t n = ::recvmsg(c, &mh, 0);
            const cmsghdr* cm = n > 0 ? CMSG_FIRSTHDR(&mh) : nullptr;
            bool root = false;
            if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_CREDENTIALS) {
                ucred cr{};
                std::memcpy(&cr, CMSG_DATA(cm), sizeof cr);
                root = cr.uid == ::geteuid();  // the test's own uid stands for 0
            }
            if (n > 0 && root) {
                const std::string msg(buf, static_cast<std::size_t>(n));
                std::lock_guard g(mu_);
                messages_.push_back(msg);
                if (msg == "setup") {
                    std::string reply = "SLEEP 10 ";
                    for (unsigned b : banned_)
                        reply += "IRQ " + std::to_string(b) + " LOAD 0 DIFF 0 CLASS 0 ";
                    reply += "BANNED 00000000";
                    (void)!::send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
                } else if (msg.starts_with("settings ban irqs ")) {
                    banned_.clear();
                    if (msg != "settings ban irqs NONE") {
                        std::string rest = msg.substr(18);
                        for (auto n2 : parse_cpulist_words(rest))
                            banned_.push_back(n2);
                    }
                }
            }
            ::close(c);
        }
    }
    static std::vector<unsigned> parse_cpulist_words(const std::string& s) {
        std::vector<unsigned> out;
        std::size_t i = 0;
        while (i < s.size()) {
            while (i < s.size() && s[i] == ' ')
                ++i;
            std::size_t j = i;
            while (j < s.size() && s[j] != ' ')
                ++j;
            if (j > i) out.push_back(static_cast<unsigned>(std::stoul(s.substr(i, j - i))));
            i = j;
        }
        return out;
    }
    fs::path path_;
    int fd_ = -1;
    std::atomic<bool> stop_{false};
    std::thread thread_;
    std::mutex mu_;
    std::vector<std::string> messages_;
    std::vector<unsigned> banned_;
};

// A sysfs and proc tree as the kernel lays them out for an e1000e port
// (eth1, three MSI-X vectors: rx-0, tx-0 and the link vector) on NUMA node 1.
class IrqTree : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/nictune-irq-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        root_ = tmpl;
        roots_ = sysinfo::IrqRoots{root_ / "sys", root_ / "proc", root_ / "run"};
        const fs::path pci = roots_.sysfs / "devices/pci0000:00/0000:00:02.0";
        fs::create_directories(pci / "msi_irqs");
        for (const char* v : {"30", "31", "32"})
            std::ofstream(pci / "msi_irqs" / v) << "msix\n";
        std::ofstream(pci / "numa_node") << "1\n";
        fs::create_directories(roots_.sysfs / "class/net/eth1");
        fs::create_directory_symlink(pci, roots_.sysfs / "class/net/eth1/device");
        fs::create_directories(roots_.sysfs / "devices/system/cpu");
        std::ofstream(roots_.sysfs / "devices/system/cpu/online") << "0-5\n";
        fs::create_directories(roots_.sysfs / "devices/system/node/node1");
        // CPU 6 is in the node but offline: no IRQ goes there.
        std::ofstream(roots_.sysfs / "devices/system/node/node1/cpulist") << "3-4,6\n";
        std::ofstream(roots_.proc / "interrupts") << "";  // created below
        fs::create_directories(roots_.proc);
        std::ofstream(roots_.proc / "interrupts")
            << "           CPU0       CPU1       CPU2       CPU3       CPU4       CPU5\n"
               "  0:         10          0          0          0          0          0   "
               "IO-APIC   2-edge      timer\n"
               " 30:        100          0          0          0          0          0  "
               "PCI-MSIX-0000:00:02.0    0-edge      eth1-rx-0\n"
               " 31:         50          0          0          0          0          0  "
               "PCI-MSIX-0000:00:02.0    1-edge      eth1-tx-0\n"
               " 32:          2          0          0          0          0          0  "
               "PCI-MSIX-0000:00:02.0    2-edge      eth1\n";
        for (const char* irq : {"30", "31", "32"}) {
            fs::create_directories(roots_.proc / "irq" / irq);
            std::ofstream(roots_.proc / "irq" / irq / "smp_affinity_list") << "0-5\n";
            std::ofstream(roots_.proc / "irq" / irq / "effective_affinity_list") << "0\n";
        }
        fs::create_directories(roots_.run / "irqbalance");
    }
    void TearDown() override { fs::remove_all(root_); }
    std::string file(const fs::path& p) {
        std::ifstream in(p);
        return std::string(std::istreambuf_iterator<char>(in), {});
    }
    // A process named irqbalance in the fixture's /proc.
    fs::path fake_irqbalance(int pid) {
        fs::create_directories(roots_.proc / std::to_string(pid));
        std::ofstream(roots_.proc / std::to_string(pid) / "comm") << "irqbalance\n";
        return roots_.run / "irqbalance" / ("irqbalance" + std::to_string(pid) + ".sock");
    }
    // One interface's placement, /proc/interrupts read for it.
    Result<std::optional<IrqPlacement>> read_one(std::string_view ifname, bool effective = true) {
        sysinfo::IrqFiles files(roots_);
        auto table = files.interrupts();
        if (!table) return std::unexpected(table.error());
        return files.read(ifname, *table, effective);
    }
    // Two more ports like eth1 (eth2: IRQs 40-42, eth3: 50-52), each
    // with its own PCI function and /proc/interrupts lines.
    void more_ports() {
        std::ofstream interrupts(roots_.proc / "interrupts", std::ios::app);
        for (int port : {2, 3}) {
            const std::string name = "eth" + std::to_string(port);
            const fs::path pci =
                roots_.sysfs / ("devices/pci0000:00/0000:00:0" + std::to_string(port + 1) + ".0");
            fs::create_directories(pci / "msi_irqs");
            std::ofstream(pci / "numa_node") << "1\n";
            fs::create_directories(roots_.sysfs / "class/net" / name);
            fs::create_directory_symlink(pci, roots_.sysfs / "class/net" / name / "device");
            const char* kinds[] = {"-rx-0", "-tx-0", ""};
            for (int i = 0; i < 3; ++i) {
                const std::string irq = std::to_string(port * 10 + 20 + i);
                std::ofstream(pci / "msi_irqs" / irq) << "msix\n";
                interrupts
                    << " " << irq
                    << ":          1          0          0          0          0          0  "
                       "PCI-MSIX  "
                    << i << "-edge      " << name << kinds[i] << "\n";
                fs::create_directories(roots_.proc / "irq" / irq);
                std::ofstream(roots_.proc / "irq" / irq / "smp_affinity_list") << "0-5\n";
                std::ofstream(roots_.proc / "irq" / irq / "effective_affinity_list") << "1\n";
            }
        }
    }
    static std::vector<NicState> named(std::initializer_list<const char*> names) {
        std::vector<NicState> out;
        for (const char* n : names) {
            out.emplace_back();
            out.back().id.name = n;
        }
        return out;
    }
    fs::path root_;
    sysinfo::IrqRoots roots_;
};

TEST_F(IrqTree, ReadsTheQueueVectorsTheirAffinityAndTheNodesOnlineCpus) {
    auto p = read_one("eth1");
    ASSERT_TRUE(p) << p.error().str();
    ASSERT_TRUE(*p);
    ASSERT_EQ((*p)->irqs.size(), 2U) << "rx-0 and tx-0; the link vector stays";
    EXPECT_EQ((*p)->irqs[0], (QueueIrq{30, "eth1-rx-0", "0-5", "0"}));
    EXPECT_EQ((*p)->irqs[1].name, "eth1-tx-0");
    EXPECT_EQ((*p)->numa_node, 1);
    EXPECT_EQ((*p)->node_cpus, (std::vector<unsigned>{3, 4}));
    EXPECT_EQ((*p)->online_cpus, (std::vector<unsigned>{0, 1, 2, 3, 4, 5}));
    EXPECT_FALSE((*p)->irqbalance) << "irqbalance is the caller's (read_irq_placements)";
    auto none = read_one("veth0");
    ASSERT_TRUE(none);
    EXPECT_FALSE(*none) << "no device: no queue IRQs";
}

TEST_F(IrqTree, NoNumaNodeIsNoNode) {
    std::ofstream(roots_.sysfs / "devices/pci0000:00/0000:00:02.0/numa_node", std::ios::trunc)
        << "-1\n";
    auto p = read_one("eth1");
    ASSERT_TRUE(p && *p);
    EXPECT_FALSE((*p)->numa_node);
    EXPECT_TRUE((*p)->node_cpus.empty());
}

TEST_F(IrqTree, WritesTheCpuListAndNamesAGoneIrq) {
    sysinfo::IrqFiles files(roots_);
    std::ofstream(roots_.proc / "irq/30/smp_affinity_list", std::ios::trunc);
    ASSERT_TRUE(files.write_affinity(30, "4,3", "eth1: irq.30.cpus"));
    EXPECT_EQ(file(roots_.proc / "irq/30/smp_affinity_list"), "3-4");
    auto gone = files.write_affinity(99, "1", "eth1: irq.99.cpus");
    ASSERT_FALSE(gone);
    EXPECT_EQ(gone.error().code, Errc::Unsupported);
    EXPECT_NE(gone.error().str().find("IRQ 99 is gone"), std::string::npos) << gone.error().str();
    EXPECT_FALSE(fs::exists(roots_.proc / "irq/99")) << "never creates a file";
}

// The write reads the file back on its own descriptor: what the file holds
// afterwards, not the text it wrote (a regular file keeps the tail of a
// longer old value, which procfs would not: the read-back shows it).
TEST_F(IrqTree, AWriteReadsTheFileBackOnItsOwnDescriptor) {
    sysinfo::IrqFiles files(roots_);
    std::ofstream(roots_.proc / "irq/30/smp_affinity_list", std::ios::trunc);
    auto r = files.write_affinity(30, "4,3", "eth1: irq.30.cpus");
    ASSERT_TRUE(r) << r.error().str();
    EXPECT_EQ(*r, std::optional<std::string>("3-4"));
    std::ofstream(roots_.proc / "irq/31/smp_affinity_list", std::ios::trunc) << "0-15\n";
    r = files.write_affinity(31, "2", "eth1: irq.31.cpus");
    ASSERT_TRUE(r) << r.error().str();
    EXPECT_EQ(*r, std::optional<std::string>("2-15")) << "read from offset 0, in read()'s form";
    EXPECT_EQ(file(roots_.proc / "irq/31/smp_affinity_list"), "2-15\n");
}

TEST(IrqWritesSeen, AnswersTheWrittenIrqsNewestWriteFirstOrderAndDropsFailedOnes) {
    IrqWritesSeen seen;
    EXPECT_FALSE(seen.placement(7)) << "nothing written: read it";
    seen.wrote(7, 31, std::optional<std::string>("1"));
    seen.wrote(7, 30, std::optional<std::string>("0"));
    seen.wrote(8, 40, std::optional<std::string>("5"));
    seen.wrote(7, 31, std::optional<std::string>("2-3"));  // the undo's write, newer
    auto p = seen.placement(7);
    ASSERT_TRUE(p);
    ASSERT_EQ(p->irqs.size(), 2U);
    EXPECT_EQ(p->irqs[0], (QueueIrq{31, "", "2-3", std::nullopt}));
    EXPECT_EQ(p->irqs[1], (QueueIrq{30, "", "0", std::nullopt}));
    ASSERT_TRUE(seen.placement(8));
    EXPECT_EQ(seen.placement(8)->irqs, (std::vector<QueueIrq>{{40, "", "5", std::nullopt}}));

    // A failed write (a managed IRQ's EIO) leaves nothing to verify; one
    // that succeeds again is back.
    const Result<std::optional<std::string>> eio =
        fail(Errc::Unsupported, "eth1: irq.30.cpus", "managed");
    seen.wrote(7, 30, eio);
    ASSERT_TRUE(seen.placement(7));
    EXPECT_EQ(seen.placement(7)->irqs, (std::vector<QueueIrq>{{31, "", "2-3", std::nullopt}}));
    seen.wrote(7, 30, std::optional<std::string>("4"));
    ASSERT_TRUE(seen.placement(7));
    EXPECT_EQ(seen.placement(7)->irqs.size(), 2U);
    EXPECT_EQ(seen.placement(7)->irqs[1].affinity, "4");

    seen.clear();
    EXPECT_FALSE(seen.placement(7));
    EXPECT_FALSE(seen.placement(8));
}

TEST(IrqWritesSeen, AWriteWithoutReadBackOrIrqbalancesListMakesTheInterfaceOneToRead) {
    IrqWritesSeen seen;
    seen.wrote(7, 30, std::optional<std::string>("0"));
    seen.wrote(7, 31, std::optional<std::string>{});  // written, not read back
    seen.wrote(7, 32, std::optional<std::string>("1"));
    EXPECT_FALSE(seen.placement(7));
    seen.wrote(8, 40, std::optional<std::string>("0"));
    seen.unseen(8);
    EXPECT_FALSE(seen.placement(8));
    seen.unseen(9);
    seen.wrote(9, 50, std::optional<std::string>("0"));
    EXPECT_FALSE(seen.placement(9)) << "stays one to read for the rest of the observation";
}

TEST_F(IrqTree, AsksARunningIrqbalanceAndBansOnlyThisInterfacesIrqs) {
    const fs::path sock = fake_irqbalance(4242);
    StandInIrqbalance ib(sock, {7, 31});  // 7: a --banirq of the admin's
    sysinfo::IrqFiles files(roots_);
    auto seen = files.irqbalance();
    ASSERT_TRUE(seen);
    EXPECT_EQ(seen->pid, 4242);
    EXPECT_EQ(seen->socket, sock.string());
    ASSERT_TRUE(seen->banned) << seen->problem;
    EXPECT_EQ(*seen->banned, (std::vector<unsigned>{7, 31}));

    ASSERT_TRUE(files.ban_for_interface("eth1", {30, 31}, "eth1: irq.irqbalance_banned"));
    EXPECT_EQ(ib.banned(), (std::vector<unsigned>{7, 30, 31}));
    EXPECT_EQ(ib.messages().back(), "settings ban irqs 7 30 31");
    // Back to none of eth1's: the admin's ban stays.
    ASSERT_TRUE(files.ban_for_interface("eth1", {}, "eth1: irq.irqbalance_banned"));
    EXPECT_EQ(ib.banned(), (std::vector<unsigned>{7}));
}

TEST_F(IrqTree, WithoutEffectiveOnlySmpAffinityListIsRead) {
    auto audit = read_one("eth1", true);
    ASSERT_TRUE(audit && *audit);
    EXPECT_EQ((*audit)->irqs[0].effective, "0");
    auto plan = read_one("eth1", false);
    ASSERT_TRUE(plan && *plan);
    EXPECT_EQ((*plan)->irqs[0], (QueueIrq{30, "eth1-rx-0", "0-5", std::nullopt}));
    EXPECT_FALSE((*plan)->irqs[1].effective);
}

// nictuned's placement timer reads up to 32 interfaces a round: irqbalance
// (a /proc/*/comm scan and a "setup" on its socket) is machine wide and
// asked once for all of them, and every interface gets the same answer.
TEST_F(IrqTree, AReadOfManyInterfacesAsksIrqbalanceOnceAndHandsItToEach) {
    more_ports();
    const fs::path sock = fake_irqbalance(4242);
    StandInIrqbalance ib(sock, {7, 41});
    auto nics = named({"eth1", "veth0", "eth2", "eth3"});
    read_irq_placements(sysinfo::IrqFiles(roots_), nics, ReadRequest{});
    EXPECT_EQ(ib.messages(), std::vector<std::string>{"setup"}) << "once, not per interface";
    for (const auto* n : {&nics[0], &nics[2], &nics[3]}) {
        ASSERT_TRUE(n->irq) << n->id.name;
        EXPECT_TRUE(n->problems.empty()) << n->id.name;
        ASSERT_EQ(n->irq->irqs.size(), 2U) << n->id.name;
        ASSERT_TRUE(n->irq->irqbalance) << n->id.name;
        ASSERT_TRUE(n->irq->irqbalance->banned) << n->irq->irqbalance->problem;
        EXPECT_EQ(*n->irq->irqbalance->banned, (std::vector<unsigned>{7, 41})) << n->id.name;
    }
    EXPECT_FALSE(nics[1].irq) << "no device";
    EXPECT_EQ(nics[2].irq->irqs[0], (QueueIrq{40, "eth2-rx-0", "0-5", "1"}));
    EXPECT_EQ(nics[3].irq->irqs[1].name, "eth3-tx-0");

    // A read without queue IRQs does not ask at all.
    auto none = named({"veth0"});
    read_irq_placements(sysinfo::IrqFiles(roots_), none, ReadRequest{});
    EXPECT_EQ(ib.messages().size(), 1U);
}

TEST_F(IrqTree, BelowTheInterfacesOpenDirectoryReadsWhatTheWholePathReads) {
    // The directory opened first, then moved away: what is read below the
    // open directory is still eth1's, where its whole path finds nothing.
    const UniqueFd dir = sysinfo::open_interface_dir(roots_.sysfs, "eth1");
    ASSERT_TRUE(dir);
    const auto by_path = read_one("eth1");
    ASSERT_TRUE(by_path && *by_path);
    fs::rename(roots_.sysfs / "class/net/eth1", roots_.sysfs / "class/net/moved");
    sysinfo::IrqFiles files(roots_);
    auto table = files.interrupts();
    ASSERT_TRUE(table);
    auto below = files.read_at(dir.get(), "eth1", *table);
    ASSERT_TRUE(below) << below.error().str();
    ASSERT_TRUE(*below);
    EXPECT_EQ((*below)->irqs, (*by_path)->irqs);
    EXPECT_EQ((*below)->numa_node, (*by_path)->numa_node);
    EXPECT_EQ((*below)->node_cpus, (*by_path)->node_cpus);
    auto gone = files.read_at(-1, "eth1", *table);
    ASSERT_TRUE(gone);
    EXPECT_FALSE(*gone) << "-1: the whole path, which is gone";
    EXPECT_FALSE(sysinfo::open_interface_dir(roots_.sysfs, "eth1"));
    EXPECT_FALSE(sysinfo::open_interface_dir(roots_.sysfs, "..")) << "not an interface name";
    // A device-less interface's directory: no queue IRQs, as by its path.
    const UniqueFd veth = sysinfo::open_interface_dir(roots_.sysfs, "veth0");
    auto none = files.read_at(veth.get(), "veth0", *table);
    ASSERT_TRUE(none);
    EXPECT_FALSE(*none);
}

TEST_F(IrqTree, OneInterfaceAtATimeReadsAsTheWholeListDoes) {
    more_ports();
    const fs::path sock = fake_irqbalance(4242);
    StandInIrqbalance ib(sock, {7, 41});
    auto all = named({"eth1", "veth0", "eth2", "eth3"});
    read_irq_placements(sysinfo::IrqFiles(roots_), all, ReadRequest{});
    auto each = named({"eth1", "veth0", "eth2", "eth3"});
    const sysinfo::IrqFiles files(roots_);
    const ReadRequest req;
    IrqPlacementReader reader(files, req);
    for (auto& n : each) {
        const UniqueFd dir = sysinfo::open_interface_dir(roots_.sysfs, n.id.name);
        reader.read(n, dir.get());
    }
    EXPECT_EQ(ib.messages(), (std::vector<std::string>{"setup", "setup"}))
        << "once per reader, not per interface";
    for (std::size_t i = 0; i < all.size(); ++i) {
        EXPECT_EQ(each[i].irq.has_value(), all[i].irq.has_value()) << all[i].id.name;
        if (all[i].irq && each[i].irq) {
            EXPECT_EQ(each[i].irq->irqs, all[i].irq->irqs) << all[i].id.name;
            ASSERT_TRUE(each[i].irq->irqbalance);
            EXPECT_EQ(each[i].irq->irqbalance->banned, all[i].irq->irqbalance->banned);
        }
        EXPECT_EQ(each[i].problems.size(), all[i].problems.size()) << all[i].id.name;
    }
}

// A transaction's read-back of what it wrote: only the written IRQs'
// smp_affinity_list; /proc/interrupts, msi_irqs and irqbalance were the
// plan's read (here they are gone: reading them would show).
TEST_F(IrqTree, AReadBackReadsOnlyTheWrittenIrqsAffinity) {
    more_ports();
    const fs::path sock = fake_irqbalance(4242);
    StandInIrqbalance ib(sock, {});
    fs::remove(roots_.proc / "interrupts");
    fs::remove_all(roots_.sysfs / "devices/pci0000:00/0000:00:02.0/msi_irqs");
    std::ofstream(roots_.proc / "irq/31/smp_affinity_list", std::ios::trunc) << "4\n";
    ReadRequest req;
    req.read_back_irq("eth1", 31);
    req.read_back_irq("eth1", 99);  // gone meanwhile: read back as absent
    auto nics = named({"eth1"});
    read_irq_placements(sysinfo::IrqFiles(roots_), nics, req);
    EXPECT_TRUE(nics[0].problems.empty()) << nics[0].problems[0].message;
    ASSERT_TRUE(nics[0].irq);
    ASSERT_EQ(nics[0].irq->irqs.size(), 2U);
    EXPECT_EQ(nics[0].irq->irqs[0], (QueueIrq{31, "", "4", std::nullopt}));
    EXPECT_EQ(nics[0].irq->irqs[1], (QueueIrq{99, "", std::nullopt, std::nullopt}));
    EXPECT_FALSE(nics[0].irq->irqbalance);
    EXPECT_TRUE(ib.messages().empty()) << "irqbalance is not asked for an affinity's read-back";

    // irqbalance's list was written too: the whole section, which needs
    // /proc/interrupts (gone here: the problem shows that it was read).
    req.read_back_irq("eth1", std::nullopt);
    auto whole = named({"eth1"});
    read_irq_placements(sysinfo::IrqFiles(roots_), whole, req);
    ASSERT_EQ(whole[0].problems.size(), 1U);
    EXPECT_EQ(whole[0].problems[0].section, Section::Irq);
}

// A peer that answers a byte at a time and never closes (a hung or hostile
// irqbalance): one deadline for the whole exchange ends it with an error,
// however often a byte comes (a timeout per recv() never would).
TEST_F(IrqTree, AnIrqbalanceThatTricklesItsAnswerRunsOutOfTheOneDeadline) {
    const fs::path sock = roots_.run / "irqbalance/trickle.sock";
    const int l = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(l, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, sock.c_str(), sizeof addr.sun_path - 1);
    ASSERT_EQ(::bind(l, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_EQ(::listen(l, 1), 0);
    std::atomic<int> sent{0};
    std::thread server([&] {
        const int c = ::accept4(l, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) return;
        char buf[500];
        (void)!::recv(c, buf, sizeof buf, 0);
        // A byte every 20 ms for 4 s, or until the client hangs up.
        const auto stop = std::chrono::steady_clock::now() + std::chrono::seconds(4);
        while (std::chrono::steady_clock::now() < stop && ::send(c, "S", 1, MSG_NOSIGNAL) == 1) {
            ++sent;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        ::close(c);
    });
    const auto t0 = std::chrono::steady_clock::now();
    auto r = sysinfo::irqbalance_request(sock, "setup", std::chrono::milliseconds(300));
    const auto took = std::chrono::steady_clock::now() - t0;
    server.join();
    ::close(l);
    ASSERT_FALSE(r) << "got " << r->size() << " bytes";
    EXPECT_EQ(r.error().code, Errc::Io);
    EXPECT_NE(r.error().str().find("no complete answer within 300 ms"), std::string::npos)
        << r.error().str();
    EXPECT_NE(r.error().str().find(sock.string()), std::string::npos) << "names the socket";
    EXPECT_GT(sent.load(), 2) << "the peer did keep sending";
    // Ended by the deadline, not by the peer (which trickles for 4 s).
    EXPECT_LT(took, std::chrono::seconds(3));
}

TEST_F(IrqTree, AnIrqbalanceWithoutItsSocketIsReportedNotAsked) {
    fake_irqbalance(4243);
    auto seen = sysinfo::IrqFiles(roots_).irqbalance();
    ASSERT_TRUE(seen);
    EXPECT_FALSE(seen->banned);
    EXPECT_NE(seen->problem.find("has no socket"), std::string::npos) << seen->problem;
    auto r = sysinfo::IrqFiles(roots_).ban_for_interface("eth1", {30}, "eth1: irq");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::Unsupported);
}

// ---- plan, apply, rollback over the fake backend

IrqPlacement four_queues() {
    IrqPlacement p;
    for (unsigned i = 0; i < 4; ++i)
        p.irqs.push_back(
            QueueIrq{40 + i, "i40e-p5p1-TxRx-" + std::to_string(i), "0-7", std::to_string(i)});
    p.numa_node = 1;
    p.node_cpus = {4, 5, 6};
    p.online_cpus = {0, 1, 2, 3, 4, 5, 6, 7};
    return p;
}

class IrqTransaction : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/nictune-irqtx-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        be.nics = {test::i40e_port("p5p1")};
        be.nics[0].irq = four_queues();
        // Originals that differ per IRQ, so that an exact rollback shows.
        be.nics[0].irq->irqs[1].affinity = "2";
        be.nics[0].irq->irqs[3].affinity = "1-3";
        be.nics[0].queues = QueueSet{{{"", 0}}, {{""}}};
        initial = be.nics;
    }
    void TearDown() override { fs::remove_all(dir_); }
    Plan plan_for(const Profile& p) {
        auto nics = be.read_interfaces(ReadRequest{{"p5p1"}, false});
        EXPECT_TRUE(nics);
        auto sys = be.read_system(SystemQuery{plan_sysctls(p)});
        return make_plan(p, *nics, *sys);
    }
    std::vector<std::string> calls() const {
        std::vector<std::string> out;
        for (const auto& c : be.calls)
            out.push_back(c.what);
        return out;
    }
    std::vector<std::string> affinities() const {
        std::vector<std::string> out;
        for (const auto& q : be.nics[0].irq->irqs)
            out.push_back(q.affinity.value_or("?"));
        return out;
    }
    // What nictune sets: each IRQ's affinity and irqbalance's list (the
    // effective CPU is the kernel's pick).
    std::string placement(const std::vector<NicState>& nics) const {
        std::string out;
        for (const auto& q : nics[0].irq->irqs)
            out += std::to_string(q.irq) + "=" + q.affinity.value_or("?") + " ";
        if (nics[0].irq->irqbalance && nics[0].irq->irqbalance->banned)
            out += "banned=" + format_cpulist(*nics[0].irq->irqbalance->banned);
        return out;
    }
    std::string placement() const { return placement(be.nics); }
    const PlanStep* step(const Plan& plan, const std::string& path) {
        for (const auto& s : plan.interfaces[0].steps)
            if (s.setting.path() == path) return &s;
        return nullptr;
    }
    test::FakeBackend be;
    std::vector<NicState> initial;
    fs::path dir_;
};

TEST_F(IrqTransaction, LocalPolicyPutsOneIrqPerNodeCpuRoundRobinAndRollsBackExactly) {
    StateStore store(dir_);
    auto p = profile_of("[irq]\npolicy = \"local\"\n");
    auto plan = plan_for(p);
    std::vector<std::string> targets;
    for (const auto& s : plan.interfaces[0].steps) {
        EXPECT_EQ(s.phase, Phase::Irq);
        targets.push_back(s.setting.path() + "=" + to_string(s.target));
    }
    EXPECT_EQ(targets, (std::vector<std::string>{"irq.40.cpus=4", "irq.41.cpus=5", "irq.42.cpus=6",
                                                 "irq.43.cpus=4"}));
    EXPECT_NE(plan.interfaces[0].steps[0].note.find("NUMA node 1 (4-6), round robin"),
              std::string::npos)
        << plan.interfaces[0].steps[0].note;
    EXPECT_NE(plan.interfaces[0].steps[0].note.find("irqbalance is not running"), std::string::npos)
        << "the plan says what it does about irqbalance";
    auto r = apply_plan(be, store, plan, {});
    ASSERT_EQ(r.result, TxResult::Applied) << (r.error ? r.error->str() : "");
    EXPECT_EQ(affinities(), (std::vector<std::string>{"4", "5", "6", "4"}));
    EXPECT_EQ(be.nics[0].irq->irqs[1].effective, "5");

    // Each IRQ back to its own original (they differ: SetUp).
    auto rb = rollback_interfaces(be, store, {"p5p1"});
    ASSERT_EQ(rb.size(), 1U);
    EXPECT_EQ(affinities(), (std::vector<std::string>{"0-7", "2", "0-7", "1-3"}));
    EXPECT_EQ(placement(), placement(initial));
}

TEST_F(IrqTransaction, AppliedAfterChannelsAndCoalesceAndBeforeRpsAndXps) {
    StateStore store(dir_);
    auto p = profile_of(
        "[channels]\ncombined = 8\n[coalesce]\nrx_usecs = 84\nadaptive_rx = false\n"
        "[irq]\ncpus = \"2-3\"\n[rps]\ncpus = \"1\"\n");
    auto plan = plan_for(p);
    auto r = apply_plan(be, store, plan, {});
    ASSERT_EQ(r.result, TxResult::Applied) << (r.error ? r.error->str() : "");
    auto c = calls();
    ASSERT_EQ(c.size(), 7U) << ::testing::PrintToString(c);
    EXPECT_EQ(c[0], "set_device channels p5p1");
    EXPECT_EQ(c[1], "set_device coalesce p5p1");
    EXPECT_EQ(c[2], "set_irq p5p1 40");
    EXPECT_EQ(c[5], "set_irq p5p1 43");
    EXPECT_EQ(c[6], "set_queue p5p1 0");
    EXPECT_EQ(affinities(), (std::vector<std::string>{"2-3", "2-3", "2-3", "2-3"}))
        << "a CPU list: every IRQ gets all of it";
    bool warned = false;
    for (const auto& w : plan.interfaces[0].warnings)
        warned |= w.find("request its IRQs again") != std::string::npos;
    EXPECT_TRUE(warned) << "a channel change re-requests the IRQs: the plan says so";
}

TEST_F(IrqTransaction, AManagedIrqIsSkippedWithANoteNotAFailure) {
    StateStore store(dir_);
    be.managed_irqs = {41};
    auto r = apply_plan(be, store, plan_for(profile_of("[irq]\npolicy = \"all\"\n")), {});
    ASSERT_EQ(r.result, TxResult::Applied) << (r.error ? r.error->str() : "");
    const auto& steps = r.interfaces[0].steps;
    ASSERT_EQ(steps.size(), 4U);
    EXPECT_EQ(steps[1].step.setting.path(), "irq.41.cpus");
    EXPECT_EQ(steps[1].outcome, Outcome::Unsupported);
    EXPECT_NE(steps[1].step.note.find("IRQ 41 is managed"), std::string::npos)
        << steps[1].step.note;
    EXPECT_EQ(steps[0].outcome, Outcome::Applied);
    EXPECT_EQ(steps[3].outcome, Outcome::Applied);
    EXPECT_EQ(affinities(), (std::vector<std::string>{"0", "2", "2", "3"}))
        << "all online CPUs round robin, the managed one as it was";
    auto rb = rollback_interfaces(be, store, {"p5p1"});
    ASSERT_EQ(rb.size(), 1U);
    for (const auto& x : rb[0].restored)
        EXPECT_TRUE(x.ok) << x.key << ": " << x.message;
    EXPECT_EQ(placement(), placement(initial)) << "exact, the managed IRQ untouched";
}

// The records of a transaction over several interfaces are the journal's
// lines restamped, unless a record changed after the journal: a managed
// IRQ's target is dropped, and must not come back from the journal.
TEST_F(IrqTransaction, AManagedIrqLeavesNoTargetInABatchsRecords) {
    StateStore store(dir_);
    be.nics.push_back(test::i40e_port("p5p2"));
    be.managed_irqs = {41};
    const Profile p = profile_of("[irq]\npolicy = \"all\"\n");
    auto nics = be.read_interfaces(ReadRequest{{"p5p1", "p5p2"}, false});
    ASSERT_TRUE(nics);
    auto sys = be.read_system(SystemQuery{plan_sysctls(p)});
    auto r = apply_plan(be, store, make_plan(p, *nics, *sys), {});
    ASSERT_EQ(r.result, TxResult::Applied) << (r.error ? r.error->str() : "");
    auto rec = store.load_interface("p5p1");
    ASSERT_TRUE(rec && *rec);
    std::vector<std::string> keys;
    for (const auto& t : (*rec)->targets)
        keys.push_back(t.key);
    EXPECT_EQ(std::ranges::count(keys, "irq.41.cpus"), 0) << "skipped: no target for drift";
    EXPECT_EQ(std::ranges::count(keys, "irq.40.cpus"), 1);
    EXPECT_EQ((*rec)->status, TxStatus::Applied);
    auto other = store.load_interface("p5p2");
    ASSERT_TRUE(other && *other);
    EXPECT_EQ((*other)->status, TxStatus::Applied);
}

TEST_F(IrqTransaction, AFailedIrqWriteUndoesTheEarlierOnes) {
    StateStore store(dir_);
    be.fail_call(3, EINVAL, "");
    auto r = apply_plan(be, store, plan_for(profile_of("[irq]\npolicy = \"local\"\n")), {});
    EXPECT_EQ(r.result, TxResult::RolledBack) << (r.error ? r.error->str() : "");
    EXPECT_EQ(placement(), placement(initial));
}

TEST_F(IrqTransaction, LocalWithoutANodeUsesEveryOnlineCpuAndSaysSo) {
    be.nics[0].irq->numa_node.reset();
    be.nics[0].irq->node_cpus.clear();
    be.nics[0].irq->online_cpus = {0, 1};
    auto plan = plan_for(profile_of("[irq]\npolicy = \"local\"\n"));
    ASSERT_EQ(plan.interfaces[0].steps.size(), 4U);
    EXPECT_EQ(plan.interfaces[0].steps[2].target, Scalar{std::string("0")});
    EXPECT_EQ(plan.interfaces[0].steps[3].target, Scalar{std::string("1")});
    EXPECT_NE(plan.interfaces[0].steps[0].note.find("no NUMA node (numa_node -1)"),
              std::string::npos)
        << plan.interfaces[0].steps[0].note;
}

TEST_F(IrqTransaction, ACpuListWithNoOnlineCpuIsRefusedNamingTheProfile) {
    auto plan = plan_for(profile_of("[irq]\ncpus = \"12-13\"\n"));
    ASSERT_EQ(plan.refusals().size(), 1U);
    EXPECT_NE(plan.refusals()[0].find("p.toml:2:8: none of CPUs 12-13 is online"),
              std::string::npos)
        << plan.refusals()[0];
}

TEST_F(IrqTransaction, ADeviceWithoutQueueIrqsIsUnsupported) {
    be.nics[0].irq.reset();
    auto plan = plan_for(profile_of("[irq]\npolicy = \"local\"\n"));
    ASSERT_EQ(plan.interfaces[0].steps.size(), 1U);
    EXPECT_EQ(plan.interfaces[0].steps[0].kind, StepKind::Unsupported);
    EXPECT_NE(plan.interfaces[0].steps[0].note.find("no queue IRQs"), std::string::npos);
    EXPECT_TRUE(plan.refusals().empty());
}

TEST_F(IrqTransaction, ARunningIrqbalanceIsToldFirstAndUntoldOnRollback) {
    StateStore store(dir_);
    be.nics[0].irq->irqbalance =
        IrqBalance{321, "/run/irqbalance/irqbalance321.sock", std::vector<unsigned>{7, 41}, ""};
    initial = be.nics;
    auto plan = plan_for(profile_of("[irq]\npolicy = \"local\"\n"));
    const PlanStep* ban = step(plan, "irq.irqbalance_banned");
    ASSERT_NE(ban, nullptr);
    EXPECT_EQ(ban->current, Scalar{std::string("41")});
    EXPECT_EQ(ban->target, Scalar{std::string("40-43")});
    EXPECT_NE(ban->note.find("nictune does not stop it"), std::string::npos) << ban->note;
    EXPECT_NE(ban->note.find("settings ban irqs"), std::string::npos) << ban->note;
    auto r = apply_plan(be, store, plan, {});
    ASSERT_EQ(r.result, TxResult::Applied) << (r.error ? r.error->str() : "");
    EXPECT_EQ(calls().front(), "set_irqbalance p5p1") << "before any IRQ is placed";
    EXPECT_EQ(be.nics[0].irq->irqbalance->banned, (std::vector<unsigned>{7, 40, 41, 42, 43}));
    rollback_interfaces(be, store, {"p5p1"});
    EXPECT_EQ(placement(), placement(initial)) << "IRQs and irqbalance's list as they were";
}

TEST_F(IrqTransaction, AnIrqbalanceThatCannotBeToldIsUnsupportedAndNeverStopped) {
    be.nics[0].irq->irqbalance =
        IrqBalance{321, "/run/irqbalance/irqbalance321.sock", std::nullopt, "no socket"};
    auto plan = plan_for(profile_of("[irq]\npolicy = \"local\"\n"));
    const PlanStep* ban = step(plan, "irq.irqbalance_banned");
    ASSERT_NE(ban, nullptr);
    EXPECT_EQ(ban->kind, StepKind::Unsupported);
    EXPECT_NE(ban->note.find("systemctl disable --now irqbalance"), std::string::npos);
    EXPECT_TRUE(plan.refusals().empty());
}

TEST_F(IrqTransaction, AuditJsonNamesEachIrqWithItsAffinityAndNullWithoutIrqs) {
    auto nics = be.read_interfaces(ReadRequest{{"p5p1"}, false});
    ASSERT_TRUE(nics);
    AuditReport rep;
    rep.interfaces.push_back(InterfaceAudit{});
    rep.interfaces[0].state = (*nics)[0];
    auto j = report::audit_json(rep);
    const auto& irq = j.at("interfaces").at(0).at("irq");
    EXPECT_EQ(irq.at("42").at("name"), "i40e-p5p1-TxRx-2");
    EXPECT_EQ(irq.at("42").at("affinity"), "0-7");
    EXPECT_EQ(irq.at("42").at("effective"), "2");
    rep.interfaces[0].state.irq.reset();
    j = report::audit_json(rep);
    EXPECT_TRUE(j.at("interfaces").at(0).at("irq").is_null());
}

}  // namespace
}  // namespace nictune
