// on_small_stack: runs a test body on a thread with a small stack, so that a recursion the
// nesting limit (relax/support/limits.h) does not keep shallow crashes the test.
//
// The stack is 1 MiB, the promise every walk of an accepted tree keeps. AddressSanitizer puts
// redzones around every local and so multiplies each frame's size; under it the stack is 8 MiB,
// still far below what an unbounded recursion over the fuzz findings' 4,000-5,600 levels needs.
#pragma once

#include <pthread.h>

#include <cstddef>
#include <functional>

#include "gtest/gtest.h"
#include "test_env.h"

namespace relax::testing_util {

/// The stack size of on_small_stack: 1 MiB, 8 MiB under AddressSanitizer.
inline constexpr size_t kSmallStack = (size_t{1} << 20) * (kAddressSanitizer ? 8 : 1);

/// Runs `body` on a new thread whose stack is kSmallStack bytes, and waits for it.
inline void on_small_stack(const std::function<void()>& body) {
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, kSmallStack), 0);
  auto trampoline = [](void* arg) -> void* {
    (*static_cast<const std::function<void()>*>(arg))();
    return nullptr;
  };
  pthread_t thread;
  ASSERT_EQ(pthread_create(&thread, &attr, trampoline, const_cast<std::function<void()>*>(&body)),
            0);
  ASSERT_EQ(pthread_join(thread, nullptr), 0);
  pthread_attr_destroy(&attr);
}

}  // namespace relax::testing_util
