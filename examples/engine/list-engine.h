/* SPDX-License-Identifier: MIT */
/* An example timer engine that lives outside timerkit: a sorted list.
 *
 * The engine table to register with tk_engine_register(); see list-engine.c. */
#ifndef EXAMPLE_LIST_ENGINE_H
#define EXAMPLE_LIST_ENGINE_H

#include <timerkit.h>

extern const tk_queue_ops example_list_engine;

#endif
