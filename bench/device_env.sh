# bench/device_env.sh — sourced by bench/run.sh: makes the carried
# .device-deps/ (bench/device_deps.sh) usable and appends the CMake prefix to the
# caller's CMAKE_ARGS array. Needs ROOT (the repository root) to be set.
if [ -d "$ROOT/.device-deps" ]; then
  PREFIX=$ROOT/.device-deps/prefix
  if [ ! -f "$PREFIX/lib/cmake/GTest/GTestConfig.cmake" ]; then
    cmake -S "$ROOT/.device-deps/googletest" -B /tmp/opgraph-gtest-build -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_INSTALL_PREFIX="$PREFIX" -DCMAKE_INSTALL_LIBDIR=lib -DBUILD_GMOCK=OFF >/dev/null
    ninja -C /tmp/opgraph-gtest-build -j16 install >/dev/null
  fi
  CMAKE_ARGS+=("-DCMAKE_PREFIX_PATH=$PREFIX")
  echo "using carried .device-deps"
fi
