# Writes OUT: a C++ file holding every knowledge-base JSON file as a string, by file name, as
# NAMESPACE::embedded_files() (default cudoctor::kb; the tests embed their frozen copy too).
set(uses "")
if(NOT NAMESPACE)
  set(NAMESPACE cudoctor::kb)
else()
  set(uses "using cudoctor::kb::EmbeddedFile;\n")
endif()
set(body "#include \"cudoctor/kb/embedded.hpp\"\nnamespace ${NAMESPACE} {\n${uses}const std::vector<EmbeddedFile>& embedded_files() {\n  static const std::vector<EmbeddedFile> files = {\n")
string(REPLACE "|" ";" FILES "${FILES}")
foreach(f IN LISTS FILES)
  file(READ ${f} content)
  get_filename_component(name ${f} NAME)
  # Raw string delimiter chosen so JSON cannot close it.
  string(APPEND body "    {\"${name}\", R\"cudoctor_kb(${content})cudoctor_kb\"},\n")
endforeach()
string(APPEND body "  };\n  return files;\n}\n}  // namespace ${NAMESPACE}\n")
file(WRITE ${OUT}.tmp "${body}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUT}.tmp ${OUT})
