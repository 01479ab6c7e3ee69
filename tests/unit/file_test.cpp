// util/unique_fd.hpp and util/file.hpp: the one fd owner, whole-file reads,
// and the atomic writer every file of nictune's goes through. Each test
// works in its own mkdtemp directory.
#include "util/file.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "util/unique_fd.hpp"

namespace nictune {
namespace {

namespace fs = std::filesystem;

class FileTest : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/nictune-file-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr) << std::strerror(errno);
        dir_ = tmpl;
    }
    void TearDown() override {
        std::error_code ec;
        fs::permissions(dir_, fs::perms::owner_all, ec);
        fs::remove_all(dir_, ec);
    }
    [[nodiscard]] std::vector<std::string> entries() const {
        std::vector<std::string> out;
        for (const auto& e : fs::directory_iterator(dir_))
            out.push_back(e.path().filename().string());
        std::ranges::sort(out);
        return out;
    }
    static std::string text_of(const fs::path& p) {
        std::ifstream in(p, std::ios::binary);
        return {std::istreambuf_iterator<char>(in), {}};
    }
    fs::path dir_;
};

// Whether `fd` is an open descriptor of this process.
bool is_open(int fd) {
    return ::fcntl(fd, F_GETFD) != -1;
}

TEST(UniqueFd, ClosesWhatItOwnsOnceWhenDestroyedResetOrReplaced) {
    int raw = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    ASSERT_GE(raw, 0);
    { const UniqueFd owner(raw); }
    EXPECT_FALSE(is_open(raw)) << "destruction closes";

    UniqueFd a(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    const int first = a.get();
    a.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    EXPECT_FALSE(is_open(first)) << "reset closes the one it held";
    EXPECT_TRUE(is_open(a.get()));

    UniqueFd b(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    const int second = b.get();
    const int moved = a.get();
    b = std::move(a);
    EXPECT_FALSE(is_open(second)) << "move assignment closes the one it replaces";
    EXPECT_EQ(b.get(), moved);
    EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): moved-from is empty
    UniqueFd c(std::move(b));
    EXPECT_EQ(c.get(), moved);
    EXPECT_TRUE(is_open(moved));
    EXPECT_EQ(c.close(), 0);
    EXPECT_FALSE(is_open(moved));
    EXPECT_EQ(c.close(), 0) << "closing an empty owner is nothing";
}

TEST(UniqueFd, ReleaseGivesTheDescriptorUpAndAFailedOpenIsEmpty) {
    UniqueFd owner(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    const int raw = owner.release();
    EXPECT_FALSE(owner);
    EXPECT_TRUE(is_open(raw)) << "release does not close";
    ::close(raw);

    const UniqueFd failed(::open("/nonexistent/x", O_RDONLY | O_CLOEXEC));
    EXPECT_FALSE(failed);
    EXPECT_EQ(failed.get(), -1);
}

TEST(UniqueFd, ResetKeepsErrnoForTheCallerToReport) {
    UniqueFd owner(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    errno = ENOSPC;
    owner.reset();
    EXPECT_EQ(errno, ENOSPC);
}

TEST_F(FileTest, ReadsAWholeFileAndTellsAMissingOneFromAnError) {
    const std::string big(100000, 'x');
    std::ofstream(dir_ / "big") << big;
    auto r = read_file(dir_ / "big");
    ASSERT_TRUE(r) << r.error().str();
    ASSERT_TRUE(*r);
    EXPECT_EQ(**r, big) << "across several reads";
    auto cut = read_file(dir_ / "big", 10);
    ASSERT_TRUE(cut && *cut);
    EXPECT_EQ(**cut, std::string(10, 'x'));

    auto missing = read_file(dir_ / "missing");
    ASSERT_TRUE(missing) << missing.error().str();
    EXPECT_FALSE(*missing);

    // A directory opens but does not read: an error with errno, naming it.
    auto bad = read_file(dir_);
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().sys_errno, EISDIR);
    EXPECT_EQ(bad.error().context, dir_.string());
    EXPECT_TRUE(bad.error().message.starts_with("cannot read: ")) << bad.error().str();
}

TEST_F(FileTest, ReplacesAFileWholeAndLeavesNoTemporaryFile) {
    ASSERT_TRUE(write_file_atomically(dir_ / "f.json", "old\n"));
    ASSERT_TRUE(write_file_atomically(dir_ / "f.json", "new\n"));
    EXPECT_EQ(text_of(dir_ / "f.json"), "new\n");
    EXPECT_EQ(entries(), std::vector<std::string>{"f.json"});
    struct stat st {};
    ASSERT_EQ(::stat((dir_ / "f.json").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600U);
}

TEST_F(FileTest, GivesTheModeAskedWhateverTheUmask) {
    const mode_t old = ::umask(077);
    const auto ok = write_file_atomically(
        dir_ / "m.prom", "a 1\n", AtomicWrite{.sync_file = false, .sync_dir = false, .mode = 0644});
    ::umask(old);
    ASSERT_TRUE(ok) << ok.error().str();
    struct stat st {};
    ASSERT_EQ(::stat((dir_ / "m.prom").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0644U);
}

TEST_F(FileTest, AFailedWriteKeepsTheOldFileAndRemovesTheTemporaryOne) {
    ASSERT_TRUE(write_file_atomically(dir_ / "f.json", "old\n"));
    // write() fails with EFBIG past the limit, even for root.
    const auto previous = std::signal(SIGXFSZ, SIG_IGN);
    rlimit saved{};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
    rlimit small = saved;
    small.rlim_cur = 8;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
    const auto r = write_file_atomically(dir_ / "f.json", "a longer new text\n");
    ::setrlimit(RLIMIT_FSIZE, &saved);
    std::signal(SIGXFSZ, previous);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().sys_errno, EFBIG);
    EXPECT_EQ(r.error().context, (dir_ / "f.json").string()) << "named after the target";
    EXPECT_TRUE(r.error().message.starts_with("cannot write: ")) << r.error().str();
    EXPECT_EQ(text_of(dir_ / "f.json"), "old\n");
    EXPECT_EQ(entries(), std::vector<std::string>{"f.json"});
}

TEST_F(FileTest, AnUncommittedFileLeavesNothingAndACommittedOneStaysOpen) {
    auto d = Directory::open(dir_);
    ASSERT_TRUE(d) << d.error().str();
    {
        auto f = AtomicFile::create(*d, "x.json");
        ASSERT_TRUE(f) << f.error().str();
        ASSERT_TRUE(f->write("half"));
        ASSERT_EQ(entries().size(), 1U);
        EXPECT_TRUE(entries()[0].starts_with(".x.json.")) << entries()[0];
        EXPECT_FALSE(entries()[0].ends_with(".json")) << "never read as a record";
    }
    EXPECT_TRUE(entries().empty()) << "dropped before commit: the temporary file goes";

    auto f = AtomicFile::create(*d, "x.json");
    ASSERT_TRUE(f);
    ASSERT_TRUE(f->write("whole"));
    ASSERT_TRUE(f->sync());
    auto fd = f->commit();
    ASSERT_TRUE(fd) << fd.error().str();
    EXPECT_TRUE(is_open(fd->get())) << "for a caller that holds a lock on it";
    ASSERT_TRUE(d->sync(dir_ / "x.json"));
    EXPECT_EQ(entries(), std::vector<std::string>{"x.json"});
    EXPECT_EQ(text_of(dir_ / "x.json"), "whole");

    auto gone = d->remove("x.json");
    ASSERT_TRUE(gone);
    EXPECT_TRUE(*gone);
    auto again = d->remove("x.json");
    ASSERT_TRUE(again) << "already gone is not an error";
    EXPECT_FALSE(*again);
}

TEST_F(FileTest, TemporaryNamesDifferSoWritersDoNotCollide) {
    auto d = Directory::open(dir_);
    ASSERT_TRUE(d);
    std::vector<AtomicFile> open;
    for (int i = 0; i < 50; ++i) {
        auto f = AtomicFile::create(*d, "same.json");
        ASSERT_TRUE(f) << f.error().str();
        open.push_back(std::move(*f));
    }
    EXPECT_EQ(entries().size(), 50U);
}

TEST_F(FileTest, ADirectoryThatIsMissingIsAnErrorNamingTheFile) {
    const auto r = write_file_atomically(dir_ / "missing" / "f.json", "x");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().sys_errno, ENOENT);
    EXPECT_EQ(r.error().context, (dir_ / "missing" / "f.json").string());
    ASSERT_TRUE(make_directory(dir_ / "missing"));
    ASSERT_TRUE(make_directory(dir_ / "missing")) << "one that is there satisfies it";
    EXPECT_TRUE(write_file_atomically(dir_ / "missing" / "f.json", "x"));
}

}  // namespace
}  // namespace nictune
