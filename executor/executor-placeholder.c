/* Placeholder until the executor lands. */
typedef int tk__executor_placeholder;
