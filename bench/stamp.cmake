# Writes OUT (tkb-build.c): the commit of the source tree SRC, whether it has
# uncommitted changes, and a hash of those changes, as tkbench's metadata
# reports them (bench/output/metadata.c). Run at every build by the tkb_stamp target;
# the file is replaced only when its content changes.
#   cmake -DSRC=<source dir> -DOUT=<file> -P stamp.cmake
set(commit "unknown")
set(dirty "no")
set(diff "")
find_program(GIT git)
if(GIT)
  execute_process(COMMAND ${GIT} -C ${SRC} rev-parse HEAD
    OUTPUT_VARIABLE out RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(rc EQUAL 0 AND out)
    set(commit "${out}")
    execute_process(COMMAND ${GIT} -C ${SRC} --no-optional-locks status --porcelain --untracked-files=no
      OUTPUT_VARIABLE st RESULT_VARIABLE rc ERROR_QUIET)
    if(rc EQUAL 0 AND st)
      set(dirty "yes")
      # the same hash output/metadata.c computes for the tree at run time
      execute_process(COMMAND sh -c "'${GIT}' -C '${SRC}' diff HEAD | sha1sum | cut -c1-12"
        OUTPUT_VARIABLE diff OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    endif()
  endif()
endif()
set(text "/* Written by bench/stamp.cmake at build time: do not edit. */
const char tkb_build_commit[] = \"${commit}\";
const char tkb_build_dirty[] = \"${dirty}\";
const char tkb_build_diff[] = \"${diff}\";
")
file(WRITE "${OUT}.tmp" "${text}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp" "${OUT}")
file(REMOVE "${OUT}.tmp")
