#include "runtime/thread_args.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

namespace fp {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// The shipped llama-server data: the flag the harness adds must be one llama-server reads.
Adapter llama_server() {
  auto a = load_adapter("llama-server");
  EXPECT_TRUE(a.ok()) << a.error().message;
  return a.ok() ? *a : Adapter{};
}

TEST(ThreadArgs, APinnedLlamaServerGetsOneThreadPerCpu) {
  // A 16-core machine without SMT (the H200 VM): llama.cpp would start 16 threads on 15 CPUs.
  const auto t = thread_args_for_cpus(llama_server(), {"{runtime}", "-m", "{model}", "-fa", "{flag}"}, 15, 16);
  EXPECT_THAT(t.args, ElementsAre("-t", "15"));
  EXPECT_FALSE(t.oversubscribed);
  EXPECT_THAT(t.note, HasSubstr("runtime threads: -t 15, one per CPU it is pinned to (llama-server would start 16: "
                                "the machine's physical cores)"));
}

TEST(ThreadArgs, ARuntimeDefaultThatFitsIsKeptAsDeployed) {
  // 8 cores with SMT, 16 CPUs: llama.cpp starts 8 threads, which fit the 15 pinned CPUs.
  const auto t = thread_args_for_cpus(llama_server(), {"{runtime}"}, 15, 8);
  EXPECT_THAT(t.args, IsEmpty());
  EXPECT_THAT(t.note, HasSubstr("llama-server's own (8, the machine's physical cores), within the 15 CPUs"));
}

TEST(ThreadArgs, TheDefaultCountComesFromTheRuntimeData) {
  Adapter a = llama_server();
  EXPECT_EQ(a.threads_default, "physical_cores");
  const int cpus = static_cast<int>(std::thread::hardware_concurrency());
  const int cores = runtime_default_threads(a);
  EXPECT_GE(cores, 1);
  EXPECT_LE(cores, cpus);
  a.threads_default = "cpus";
  EXPECT_EQ(runtime_default_threads(a), cpus);
}

TEST(ThreadArgs, TheCasesOwnThreadsAreLeftAloneAndTooManyAreSaid) {
  const Adapter a = llama_server();
  auto fits = thread_args_for_cpus(a, {"{runtime}", "-t", "8"}, 15, 16);
  EXPECT_THAT(fits.args, IsEmpty());
  EXPECT_FALSE(fits.oversubscribed);
  EXPECT_THAT(fits.note, HasSubstr("the case's own (-t 8)"));
  auto too_many = thread_args_for_cpus(a, {"{runtime}", "--threads-batch=16"}, 15, 16);
  EXPECT_THAT(too_many.args, IsEmpty());
  EXPECT_TRUE(too_many.oversubscribed);
  EXPECT_THAT(too_many.note, HasSubstr("--threads-batch 16), more than the 15 CPUs"));
  // -1 means all the machine's CPUs to llama.cpp.
  EXPECT_TRUE(thread_args_for_cpus(a, {"{runtime}", "-t", "-1"}, 15, 16).oversubscribed);
}

TEST(ThreadArgs, ARuntimeWithoutThreadsDataIsSaidNotGuessed) {
  Adapter a;
  a.name = "vllm";
  a.data_file = "vllm.json";
  const auto t = thread_args_for_cpus(a, {"{runtime}"}, 7, 8);
  EXPECT_THAT(t.args, IsEmpty());
  EXPECT_THAT(t.note, HasSubstr("vllm.json) has no threads_args"));
}

}  // namespace
}  // namespace fp
