# Hand-written kernels with known faults (segfault, hang, unbounded allocation, wrong answer,
# ...), each a shared object exporting the kernel ABI symbol `kernel`, for the runner tests.
if(TARGET tests_unit_measure)
  file(GLOB measure_fixture_srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/fixtures/*.cc)
  set(measure_fixture_dir ${CMAKE_CURRENT_BINARY_DIR}/measure_fixtures)
  foreach(src ${measure_fixture_srcs})
    get_filename_component(n ${src} NAME_WE)
    add_library(measure_fixture_${n} MODULE ${src})
    set_target_properties(measure_fixture_${n} PROPERTIES PREFIX "" OUTPUT_NAME ${n}
                          LIBRARY_OUTPUT_DIRECTORY ${measure_fixture_dir})
    add_dependencies(tests_unit_measure measure_fixture_${n})
  endforeach()
  target_compile_definitions(tests_unit_measure PRIVATE
                             TUNER_MEASURE_FIXTURE_DIR="${measure_fixture_dir}")
endif()
