/* SPDX-License-Identifier: MIT */
/** @file
 * timerkit: symbol export macro.
 *
 * The library is built with hidden visibility; only names marked TK_API are
 * part of the public ABI of the shared library. */
#ifndef TIMERKIT_EXPORT_H
#define TIMERKIT_EXPORT_H

/** @def TK_API
 * Marks a function as part of the library's public ABI: default visibility
 * in the shared library, nothing in a static build (TK_STATIC_DEFINE, which
 * the CMake package and the pkg-config file define for a static library). */

/** @def TK_EXTERN_C_BEGIN
 * Opens C linkage (extern "C" {) when the header is read by a C++ compiler. */

/** @def TK_EXTERN_C_END
 * Closes what TK_EXTERN_C_BEGIN opened. */

#if defined(TK_STATIC_DEFINE)
#define TK_API
#elif defined(__GNUC__) || defined(__clang__)
#define TK_API __attribute__((visibility("default")))
#else
#define TK_API
#endif

#ifdef __cplusplus
#define TK_EXTERN_C_BEGIN extern "C" {
#define TK_EXTERN_C_END }
#else
#define TK_EXTERN_C_BEGIN
#define TK_EXTERN_C_END
#endif

#endif
