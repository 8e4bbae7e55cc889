#pragma once
// Tuning rules: the settings that cost speed or correctness (snapshot::SettingsFacts) judged
// against the knowledge base's settings. Their findings have ids starting "tune-"; check shows
// those that are warnings under a "Tuning" heading, `cudoctor tune` shows them all.
#include <string>
#include <vector>

#include "cudoctor/kb/kb.hpp"
#include "cudoctor/rules/finding.hpp"
#include "cudoctor/view/machine.hpp"

namespace cudoctor::rules::tune {

// Every place one value of one setting is set.
struct Group {
  std::string name;
  std::string value;
  std::vector<const snapshot::Setting*> places;
  bool in_process() const;
};

// The commands that take a setting away from every place it is set, or (corrected not empty)
// that set corrected there instead; appended to fix.
void undo(const view::Machine& m, const Group& g, const std::string& corrected, Fix& fix);
// "CUDA_LAUNCH_BLOCKING=1: /home/a/.bashrc:12 (shell start-up file)", one per place.
std::vector<std::string> where(const Group& g);

// tune-persistence-off and tune-device-order (tune_machine.cpp).
void persistence(const view::Machine& m, std::vector<Finding>& out);
void device_order(const view::Machine& m, const std::vector<Group>& gs, std::vector<Finding>& out);

}  // namespace cudoctor::rules::tune
