# Writes OUT, a C++ file holding the kernels_db JSON files (FILES, in DIR) as raw string
# literals, so the lumos binary carries its calibration data. Run with cmake -P.
set(names "")
set(texts "")
foreach(f ${FILES})
  file(READ "${DIR}/${f}" content)
  string(APPEND names "    \"${f}\",\n")
  string(APPEND texts "    R\"LUMOSDB(${content})LUMOSDB\",\n")
endforeach()
list(LENGTH FILES count)
file(WRITE "${OUT}.tmp" "// Generated from kernels_db/*.json by cmake/embed_kernels_db.cmake; do not edit.
namespace lumos::cost {
extern const char* const kEmbeddedDbNames[];
extern const char* const kEmbeddedDbTexts[];
extern const int kEmbeddedDbCount;
const char* const kEmbeddedDbNames[] = {
${names}};
const char* const kEmbeddedDbTexts[] = {
${texts}};
const int kEmbeddedDbCount = ${count};
}  // namespace lumos::cost
")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
