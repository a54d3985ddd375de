/* SPDX-License-Identifier: MIT */
/* timerkit: symbol export macro.
 *
 * The library is built with hidden visibility; only names marked TK_API are
 * part of the public ABI of the shared library. */
#ifndef TIMERKIT_EXPORT_H
#define TIMERKIT_EXPORT_H

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
