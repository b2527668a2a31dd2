// Renders model-driven estimates and layout searches: text, JSON and (searches) CSV.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "common/json_writer.hpp"
#include "estimate/estimate.hpp"
#include "estimate/layout_search.hpp"

namespace lumos::report {

void estimate_text(std::ostream& os, const estimate::Estimate& e);
// The estimate's fields, written into an object the caller opened.
void estimate_fields(common::JsonWriter& w, const estimate::Estimate& e);
// `files`: traces written by `lumos generate`, listed when not empty.
void estimate_json(std::ostream& os, const estimate::Estimate& e,
                   const std::vector<std::string>& files);

// The first `shown` layouts of a search (fastest first); the CSV has every layout that fits.
void search_text(std::ostream& os, const estimate::SearchRequest& q,
                 const estimate::SearchResult& r, size_t shown);
void search_json(std::ostream& os, const estimate::SearchRequest& q,
                 const estimate::SearchResult& r, size_t shown);
void search_csv(std::ostream& os, const estimate::SearchResult& r);

}  // namespace lumos::report
