#include "infra/telemetry/io_dictionary.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>

namespace tgw::infra::telemetry {
namespace {

io_dictionary fmb() {
  std::string error;
  auto d = io_dictionary::builtin("fmb", error);
  EXPECT_TRUE(d.has_value()) << error;
  return d ? std::move(*d) : io_dictionary{};
}

TEST(IoDictionary, TheFmbTableHasTheCommonSetWithUnitsAndScale) {
  const io_dictionary d = fmb();
  const std::pair<std::uint16_t, const char*> common[] = {
      {239, "ignition"},       {240, "movement"},      {66, "external_voltage"},
      {67, "battery_voltage"}, {113, "battery_level"}, {21, "gsm_signal"},
      {16, "total_odometer"},  {24, "speed"},          {69, "gnss_status"}};
  for (const auto& [id, name] : common) {
    const auto* info = d.find(id);
    ASSERT_NE(info, nullptr) << id;
    EXPECT_EQ(info->name, name) << id;
  }
  EXPECT_EQ(d.find(66)->unit, "V");
  EXPECT_DOUBLE_EQ(d.find(66)->scaled(24079, 2), 24.079);
  EXPECT_EQ(d.find(16)->unit, "m");
  EXPECT_EQ(d.find(9999), nullptr);
}

TEST(IoDictionary, NamesAreSnakeCaseAndUnique) {
  const io_dictionary d = fmb();
  std::vector<std::string> names;
  for (std::uint16_t id = 0; id < 1024; ++id)
    if (const auto* info = d.find(id)) {
      EXPECT_EQ(info->id, id);
      EXPECT_TRUE(std::all_of(info->name.begin(), info->name.end(), [](char c) {
        return std::islower(static_cast<unsigned char>(c)) ||
               std::isdigit(static_cast<unsigned char>(c)) || c == '_';
      })) << info->name;
      EXPECT_TRUE(info->bytes == 1 || info->bytes == 2 || info->bytes == 4 || info->bytes == 8)
          << info->name;
      names.push_back(info->name);
    }
  EXPECT_EQ(names.size(), d.size());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
}

TEST(IoDictionary, SignedElementsAreSignExtendedFromTheirWireSize) {
  const io_dictionary d = fmb();
  const auto* axis_x = d.find(17);
  ASSERT_NE(axis_x, nullptr);
  EXPECT_DOUBLE_EQ(axis_x->scaled(0xFFFF, 2), -1.0);
  EXPECT_DOUBLE_EQ(axis_x->scaled(0x7FFF, 2), 32767.0);
  const auto* dallas = d.find(72);
  ASSERT_NE(dallas, nullptr);
  EXPECT_DOUBLE_EQ(dallas->scaled(0xFFFFFF9C, 4), -10.0);   // -100 x 0.1 °C
  EXPECT_DOUBLE_EQ(d.find(66)->scaled(0xFFFF, 2), 65.535);  // unsigned
  // Rounded to the multiplier's decimals: 12 x 0.1 is 1.2 exactly as a double prints.
  EXPECT_EQ(d.find(182)->scaled(12, 2), 1.2);
}

// Rounded to the decimals the multiplier is written with, whatever it is: a power of
// ten, or not (0.5, 0.25, 2.5).
TEST(IoDictionary, APhysicalValueHasTheMultipliersDecimals) {
  const std::pair<double, int> written[] = {{1.0, 0},   {1000.0, 0}, {0.1, 1},  {0.5, 1},
                                            {2.5, 1},   {0.25, 2},   {0.01, 2}, {0.001, 3},
                                            {0.004, 3}, {0.0625, 4}};
  for (const auto& [multiplier, decimals] : written)
    EXPECT_EQ(decimals_of(multiplier), decimals) << multiplier;
  const std::pair<double, double> of_12345[] = {{0.5, 6172.5},   {0.25, 3086.25},
                                                {2.5, 30862.5},  {0.1, 1234.5},
                                                {0.001, 12.345}, {1000.0, 12345000.0}};
  for (const auto& [multiplier, expected] : of_12345) {
    io_element_info info;
    info.bytes = 2;
    info.multiplier = multiplier;
    EXPECT_EQ(info.scaled(12345, 2), expected) << multiplier;
  }
}

TEST(IoDictionary, AnUnknownModelIsAnError) {
  std::string error;
  EXPECT_FALSE(io_dictionary::builtin("xyz", error).has_value());
  EXPECT_NE(error.find("xyz"), std::string::npos);
  EXPECT_EQ(io_dictionary::models(), (std::vector<std::string>{"fmb", "fmc", "fmm"}));
}

}  // namespace
}  // namespace tgw::infra::telemetry
