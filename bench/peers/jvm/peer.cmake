# SPDX-License-Identifier: MIT
# The JVM peers' harness (jdk-stpe, jdk-stpe-roc, netty-1ms, netty-100ms): the Java
# of timerkit/bench/ compiled into tkbench-jvm.jar against Debian's Netty
# (libnetty-java), and tkbench-jvm, a launcher that runs it in the JDK's java
# (openjdk-17-jdk-headless) with the flags every JVM peer runs under
# (jvm-launcher.sh.in; docs/child-protocol.md). The launcher finds the jar
# beside itself, in the build tree and installed.
find_package(Java 17 QUIET COMPONENTS Runtime Development)
find_file(TKB_NETTY_JAR NAMES netty-common.jar PATHS /usr/share/java
          DOC "Netty's common jar (io.netty.util.HashedWheelTimer; Debian libnetty-java)")
if(Java_FOUND AND Java_JAVA_EXECUTABLE AND Java_JAVAC_EXECUTABLE AND Java_JAR_EXECUTABLE
   AND TKB_NETTY_JAR)
  include(UseJava)
  set(TKB_JVM_JAVAC_FLAGS --release 17 -Xlint:all)
  if(TIMERKIT_WERROR)
    list(APPEND TKB_JVM_JAVAC_FLAGS -Werror)
  endif()
  set(CMAKE_JAVA_COMPILE_FLAGS ${TKB_JVM_JAVAC_FLAGS})
  file(GLOB TKB_JVM_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/timerkit/bench/*.java)
  add_jar(tkbench_jvm SOURCES ${TKB_JVM_SOURCES} INCLUDE_JARS ${TKB_NETTY_JAR}
          OUTPUT_NAME tkbench-jvm OUTPUT_DIR ${CMAKE_CURRENT_BINARY_DIR}/jvm)
  get_target_property(TKB_JVM_JAR tkbench_jvm JAR_FILE)
  set(TKB_JAVA ${Java_JAVA_EXECUTABLE})
  configure_file(${CMAKE_CURRENT_LIST_DIR}/jvm-launcher.sh.in ${CMAKE_CURRENT_BINARY_DIR}/jvm/tkbench-jvm
                 @ONLY FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
                 GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  tkb_child_harness(jvm PROGRAM ${CMAKE_CURRENT_BINARY_DIR}/jvm/tkbench-jvm TARGET tkbench_jvm
                    INSTALL ${TKB_JVM_JAR})
else()
  tkb_child_harness(jvm MISSING
    "a JDK 17 with javac and jar (Debian openjdk-17-jdk-headless) and Netty's netty-common.jar (libnetty-java) not found at configure time")
endif()
