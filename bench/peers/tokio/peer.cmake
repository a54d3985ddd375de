# tkbench's Tokio peer (`tokio`): the harness of bench/peers/tokio/, a Rust
# program built with Debian's cargo and rustc, offline, from Debian's crate
# registry (librust-tokio-dev and the few crates it needs, in
# /usr/share/cargo/registry). Included by bench/CMakeLists.txt with every
# runtime's rule; tkbench runs it as a child (docs/child-protocol.md).
#
# Toolchain: /usr/bin's cargo and rustc first (Debian's, what a fresh CI
# machine has from apt), else whatever cargo and rustc are on the PATH (a
# rustup toolchain, say). rustc is passed to cargo explicitly (RUSTC), so the
# cargo found never picks up another rustc from the PATH; the harness's
# --describe line names the rustc that built it.
#
# The crate is copied into the build tree (tokio/crate/) and built there, so
# that cargo's Cargo.lock and target/ stay out of the source tree; its
# CARGO_HOME (tokio/cargo-home/) holds only a config that points crates.io at
# the registry folder. Nothing is downloaded.

set(TKB_TOKIO_DIR ${CMAKE_CURRENT_LIST_DIR})
set(TKB_CARGO_REGISTRY /usr/share/cargo/registry CACHE PATH
    "Debian's crate registry (a cargo directory source) the Tokio harness is built from")

find_program(TKB_CARGO cargo PATHS /usr/bin NO_DEFAULT_PATH DOC "cargo for the Tokio harness")
find_program(TKB_CARGO cargo DOC "cargo for the Tokio harness")
find_program(TKB_RUSTC rustc PATHS /usr/bin NO_DEFAULT_PATH DOC "rustc for the Tokio harness")
find_program(TKB_RUSTC rustc DOC "rustc for the Tokio harness")
file(GLOB TKB_TOKIO_CRATES LIST_DIRECTORIES true ${TKB_CARGO_REGISTRY}/tokio-1.*)

set(TKB_TOKIO_MISSING "")
if(NOT TKB_CARGO)
  set(TKB_TOKIO_MISSING "no cargo (Debian package cargo)")
elseif(NOT TKB_RUSTC)
  set(TKB_TOKIO_MISSING "no rustc (Debian package rustc)")
elseif(NOT TKB_TOKIO_CRATES)
  set(TKB_TOKIO_MISSING
      "no tokio 1.x in the crate registry ${TKB_CARGO_REGISTRY} (Debian package librust-tokio-dev)")
endif()

set(TKB_TOKIO_OUT ${CMAKE_CURRENT_BINARY_DIR}/tokio)
set(TKB_TOKIO_CRATE ${TKB_TOKIO_OUT}/crate)
set(TKB_TOKIO_HOME ${TKB_TOKIO_OUT}/cargo-home)
set(TKB_TOKIO_BIN ${TKB_TOKIO_OUT}/tkbench-tokio)

if(NOT TKB_TOKIO_MISSING)
  # cargo's home: crates.io replaced by the registry folder, offline
  file(WRITE ${TKB_TOKIO_HOME}/config.toml
       "[source.crates-io]\nreplace-with = \"debian\"\n\n"
       "[source.debian]\ndirectory = \"${TKB_CARGO_REGISTRY}\"\n\n"
       "[net]\noffline = true\n")
  # Can cargo resolve the harness's dependencies from the registry? (A
  # fraction of a second; catches a registry without one of tokio's crates.)
  file(MAKE_DIRECTORY ${TKB_TOKIO_CRATE}/src)
  file(COPY ${TKB_TOKIO_DIR}/Cargo.toml ${TKB_TOKIO_DIR}/build.rs DESTINATION ${TKB_TOKIO_CRATE})
  file(GLOB TKB_TOKIO_SOURCES CONFIGURE_DEPENDS ${TKB_TOKIO_DIR}/src/*.rs)
  file(COPY ${TKB_TOKIO_SOURCES} DESTINATION ${TKB_TOKIO_CRATE}/src)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env CARGO_HOME=${TKB_TOKIO_HOME} RUSTC=${TKB_RUSTC}
            ${TKB_CARGO} generate-lockfile --offline --manifest-path ${TKB_TOKIO_CRATE}/Cargo.toml
    RESULT_VARIABLE TKB_TOKIO_RC
    OUTPUT_VARIABLE TKB_TOKIO_LOG
    ERROR_VARIABLE TKB_TOKIO_LOG)
  if(NOT TKB_TOKIO_RC EQUAL 0)
    string(REGEX REPLACE "[\n;]+" " " TKB_TOKIO_LOG "${TKB_TOKIO_LOG}")
    string(SUBSTRING "${TKB_TOKIO_LOG}" 0 300 TKB_TOKIO_LOG)
    string(CONCAT TKB_TOKIO_MISSING
           "cargo cannot resolve tokio's crates offline from ${TKB_CARGO_REGISTRY} (Debian packages "
           "cargo, rustc, librust-tokio-dev): ${TKB_TOKIO_LOG}")
  endif()
endif()

if(TKB_TOKIO_MISSING)
  tkb_child_harness(tokio MISSING "${TKB_TOKIO_MISSING}")
  return()
endif()

set(TKB_TOKIO_RUSTFLAGS "")
if(TIMERKIT_WERROR)
  set(TKB_TOKIO_RUSTFLAGS -Dwarnings) # the harness's own crate; dependencies' lints are capped
endif()
add_custom_command(
  OUTPUT ${TKB_TOKIO_BIN}
  COMMAND ${CMAKE_COMMAND} -E copy_if_different ${TKB_TOKIO_DIR}/Cargo.toml
          ${TKB_TOKIO_DIR}/build.rs ${TKB_TOKIO_CRATE}
  COMMAND ${CMAKE_COMMAND} -E copy_if_different ${TKB_TOKIO_SOURCES} ${TKB_TOKIO_CRATE}/src
  COMMAND ${CMAKE_COMMAND} -E env CARGO_HOME=${TKB_TOKIO_HOME}
          CARGO_TARGET_DIR=${TKB_TOKIO_OUT}/target RUSTC=${TKB_RUSTC}
          "RUSTFLAGS=${TKB_TOKIO_RUSTFLAGS}" CARGO_TERM_COLOR=never
          ${TKB_CARGO} build --offline --release --quiet
          --manifest-path ${TKB_TOKIO_CRATE}/Cargo.toml
  COMMAND ${CMAKE_COMMAND} -E copy ${TKB_TOKIO_OUT}/target/release/tkbench-tokio ${TKB_TOKIO_BIN}
  DEPENDS ${TKB_TOKIO_DIR}/Cargo.toml ${TKB_TOKIO_DIR}/build.rs ${TKB_TOKIO_SOURCES}
  COMMENT "tkbench: building the Tokio harness (cargo --offline, Debian's crate registry)"
  VERBATIM)
add_custom_target(tkbench_tokio ALL DEPENDS ${TKB_TOKIO_BIN})
tkb_child_harness(tokio PROGRAM ${TKB_TOKIO_BIN} TARGET tkbench_tokio)

# The harness against the child protocol at tiny sizes (a few seconds).
if(TIMERKIT_BUILD_TESTS)
  add_test(NAME bench_tokio_harness
           COMMAND ${CMAKE_COMMAND} -DBIN=${TKB_TOKIO_BIN} -P ${TKB_TOKIO_DIR}/check.cmake)
  set_tests_properties(bench_tokio_harness PROPERTIES LABELS bench TIMEOUT 120)
endif()
