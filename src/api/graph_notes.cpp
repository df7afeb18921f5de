// api/graph_notes.cpp — plan notes at an index and the note filters
// (select_/deselect_numeric_notes, select_/deselect_behavior_notes).
//
// A filter marks plans deselected (the list is never renumbered) and withdraws
// a built one through GraphPlanState::withdraw, under the graph's mutex, so a
// concurrent execute either finishes on the plan it loaded or is refused.
#include <functional>

#include "api/plan_state.h"
#include "opgraph/graph.h"

namespace opgraph {
namespace {

// Under st.mu: deselects every plan for which `why` returns a reason.
Status filter(GraphPlanState& st, const OpGraph& g, const std::function<std::string(const PlanNotes&)>& why) {
  OPGRAPH_CHECK(check_planned(st, g));
  std::lock_guard<std::mutex> lock(st.mu);
  for (auto& p : st.plans) {
    if (!p.deselected.empty()) continue;
    std::string reason = why(p.config.notes);
    if (reason.empty()) continue;
    p.deselected = std::move(reason);
    st.withdraw(p);
  }
  st.drop_withdrawn_candidate();
  return Status::ok();
}

// The first of `notes` the plan has ("" when none) / the first it lacks.
template <class Note>
std::string first_held(const PlanNotes& have, const std::vector<Note>& notes) {
  for (Note n : notes)
    if (have.has(n)) return std::string(to_string(n));
  return {};
}
template <class Note>
std::string first_missing(const PlanNotes& have, const std::vector<Note>& notes) {
  for (Note n : notes)
    if (!have.has(n)) return std::string(to_string(n));
  return {};
}

std::string shown(const PlanNotes& n) {
  std::string s = notes_to_string(n);
  return s.empty() ? "none" : s;
}

}  // namespace

Result<PlanNotes> Graph::get_plan_notes_at_index(std::int64_t index) const {
  OPGRAPH_CHECK(check_index(*st_, *this, index));
  return st_->plans[static_cast<std::size_t>(index)].config.notes;
}

Status Graph::deselect_numeric_notes(const std::vector<NumericalNote>& notes) {
  return filter(*st_, *this, [&](const PlanNotes& have) {
    std::string n = first_held(have, notes);
    return n.empty() ? n : "has numerical note " + n + " (deselect_numeric_notes)";
  });
}

Status Graph::deselect_behavior_notes(const std::vector<BehaviorNote>& notes) {
  return filter(*st_, *this, [&](const PlanNotes& have) {
    std::string n = first_held(have, notes);
    return n.empty() ? n : "has behavior note " + n + " (deselect_behavior_notes)";
  });
}

Status Graph::select_numeric_notes(const std::vector<NumericalNote>& notes) {
  return filter(*st_, *this, [&](const PlanNotes& have) {
    std::string n = first_missing(have, notes);
    return n.empty() ? n : "lacks numerical note " + n + " (select_numeric_notes; its notes: " + shown(have) + ")";
  });
}

Status Graph::select_behavior_notes(const std::vector<BehaviorNote>& notes) {
  return filter(*st_, *this, [&](const PlanNotes& have) {
    std::string n = first_missing(have, notes);
    return n.empty() ? n : "lacks behavior note " + n + " (select_behavior_notes; its notes: " + shown(have) + ")";
  });
}

}  // namespace opgraph
