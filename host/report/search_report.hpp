// Renders layout searches (`lumos estimate --search`): text, JSON and the CSV, whose columns are
// the sweep's (report/sweep_csv.hpp: the search is a sweep over layouts). Every answer says what
// was dropped and why, each row's range, which rows tie with the best within it, and how much
// memory each layout leaves free.
#pragma once
#include <ostream>

#include "estimate/layout_search.hpp"

namespace lumos::report {

// Whether row i's step time lies inside the fastest row's range: the estimate cannot tell them
// apart. False when the range is unknown.
bool ties_with_best(const estimate::SearchResult& r, size_t i);

// The first `shown` layouts of a search (fastest first); the CSV has every layout that fits.
void search_text(std::ostream& os, const estimate::SearchRequest& q,
                 const estimate::SearchResult& r, size_t shown);
void search_json(std::ostream& os, const estimate::SearchRequest& q,
                 const estimate::SearchResult& r, size_t shown);
void search_csv(std::ostream& os, const estimate::SearchRequest& q,
                const estimate::SearchResult& r);

}  // namespace lumos::report
