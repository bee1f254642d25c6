/**
 * Every test process, and every service it starts, runs without a memory budget unless the test gives one: the
 * limits a test expects are the fixed defaults, whatever memory limit the machine's cgroup sets. Tests of the
 * budget pass their own limit or cgroup root.
 */
process.env['WQD_MEMORY_LIMIT'] ??= 'max';
