#include "runtime/ctest_gpus.h"

#include <gtest/gtest.h>

#include <map>

namespace fp {
namespace {

GetEnv env_of(std::map<std::string, std::string> vars) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [shared](const char* name) -> const char* {
    auto it = shared->find(name);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

TEST(CtestGpus, NothingOutsideCtestResourceAllocation) {
  auto ids = ctest_gpu_ids(env_of({}));
  ASSERT_TRUE(ids) << ids.error().message;
  EXPECT_FALSE(ids->has_value());
}

TEST(CtestGpus, OneGpu) {
  auto ids = ctest_gpu_ids(env_of({{"CTEST_RESOURCE_GROUP_COUNT", "1"}, {"CTEST_RESOURCE_GROUP_0", "gpus"},
                                   {"CTEST_RESOURCE_GROUP_0_GPUS", "id:3,slots:1"}}));
  ASSERT_TRUE(ids) << ids.error().message;
  EXPECT_EQ(ids->value_or("none"), "3");
}

TEST(CtestGpus, SeveralGpusAndGroups) {
  auto ids = ctest_gpu_ids(env_of({{"CTEST_RESOURCE_GROUP_COUNT", "3"},
                                   {"CTEST_RESOURCE_GROUP_0_GPUS", "id:1,slots:1;id:2,slots:1"},
                                   {"CTEST_RESOURCE_GROUP_1", "licenses"},
                                   {"CTEST_RESOURCE_GROUP_2_GPUS", "id:7,slots:1"}}));
  ASSERT_TRUE(ids) << ids.error().message;
  EXPECT_EQ(ids->value_or("none"), "1,2,7");
}

TEST(CtestGpus, GroupsWithoutGpusGiveNothing) {
  auto ids = ctest_gpu_ids(env_of({{"CTEST_RESOURCE_GROUP_COUNT", "1"}, {"CTEST_RESOURCE_GROUP_0", "licenses"}}));
  ASSERT_TRUE(ids);
  EXPECT_FALSE(ids->has_value());
}

TEST(CtestGpus, MalformedValuesAreErrorsNamingTheVariable) {
  auto bad_count = ctest_gpu_ids(env_of({{"CTEST_RESOURCE_GROUP_COUNT", "two"}}));
  ASSERT_FALSE(bad_count);
  EXPECT_NE(bad_count.error().message.find("CTEST_RESOURCE_GROUP_COUNT"), std::string::npos);
  auto bad_entry = ctest_gpu_ids(env_of({{"CTEST_RESOURCE_GROUP_COUNT", "1"}, {"CTEST_RESOURCE_GROUP_0_GPUS", "gpu3"}}));
  ASSERT_FALSE(bad_entry);
  EXPECT_NE(bad_entry.error().message.find("CTEST_RESOURCE_GROUP_0_GPUS"), std::string::npos);
  EXPECT_NE(bad_entry.error().message.find("gpu3"), std::string::npos);
}

}  // namespace
}  // namespace fp
