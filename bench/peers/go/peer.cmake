# SPDX-License-Identifier: MIT
# The Go peer's harness (go-timers): the Go of bench/peers/go, built with Debian's
# Go (golang-go, Go 1.19) into ${CMAKE_CURRENT_BINARY_DIR}/go/tkbench-go and handed
# to tkbench as a child harness (docs/child-protocol.md; docs/workloads.md says
# how each workload maps onto Go's timers). Included by bench/CMakeLists.txt.

# Go 1.19 or newer (go.mod: sync/atomic's typed values). Debian's golang-go
# puts go in /usr/bin (a link to /usr/lib/go-1.19/bin/go).
find_program(TKB_GO_EXECUTABLE NAMES go PATHS /usr/lib/go/bin
             DOC "the Go tool that builds tkbench's Go harness (Debian golang-go)")
set(TKB_GO_VERSION "")
if(TKB_GO_EXECUTABLE)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env GOENV=off GOTOOLCHAIN=local
                          ${TKB_GO_EXECUTABLE} env GOVERSION
                  OUTPUT_VARIABLE TKB_GO_VERSION OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE TKB_GO_RC ERROR_QUIET)
  if(NOT TKB_GO_RC EQUAL 0 OR NOT TKB_GO_VERSION MATCHES "^go([0-9]+\\.[0-9]+)")
    set(TKB_GO_VERSION "")
  elseif(CMAKE_MATCH_1 VERSION_LESS 1.19)
    set(TKB_GO_VERSION "")
  endif()
endif()

if(TKB_GO_VERSION)
  set(TKB_GO_SRC ${CMAKE_CURRENT_LIST_DIR})
  set(TKB_GO_OUT ${CMAKE_CURRENT_BINARY_DIR}/go)
  set(TKB_GO_HARNESS ${TKB_GO_OUT}/tkbench-go)
  file(GLOB TKB_GO_SOURCES CONFIGURE_DEPENDS ${TKB_GO_SRC}/*.go)
  list(FILTER TKB_GO_SOURCES EXCLUDE REGEX "_test\\.go$")
  # Offline and reproducible: no user settings (GOENV=off), no network (GOPROXY=off,
  # no dependencies anyway), the local toolchain only (GOTOOLCHAIN: Go 1.21 and
  # later), the build cache and module folder inside the build tree, no cgo, no
  # paths or VCS state in the binary, the host as the target.
  add_custom_command(
    OUTPUT ${TKB_GO_HARNESS}
    COMMAND ${CMAKE_COMMAND} -E env --unset=GOFLAGS --unset=GOOS --unset=GOARCH --unset=GOWORK
            GOENV=off GOTOOLCHAIN=local GOPROXY=off GO111MODULE=on CGO_ENABLED=0
            GOCACHE=${TKB_GO_OUT}/cache GOPATH=${TKB_GO_OUT}/path
            ${TKB_GO_EXECUTABLE} build -mod=mod -trimpath -buildvcs=false -o ${TKB_GO_HARNESS} .
    WORKING_DIRECTORY ${TKB_GO_SRC}
    DEPENDS ${TKB_GO_SOURCES} ${TKB_GO_SRC}/go.mod
    COMMENT "tkbench: building the Go harness (${TKB_GO_VERSION})"
    VERBATIM)
  add_custom_target(tkbench_go ALL DEPENDS ${TKB_GO_HARNESS})
  tkb_child_harness(go PROGRAM ${TKB_GO_HARNESS} TARGET tkbench_go)
else()
  tkb_child_harness(go MISSING "Go (golang-go) not found at configure time")
endif()
