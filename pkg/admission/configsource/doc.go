// Package configsource keeps admission plugins' configuration objects
// (webhook configurations, admission policies and bindings) in memory, as
// upstream's plugins keep them in informers: a list from their storage,
// then a watch from its resourceVersion, re-listed when the watch ends. A
// configuration written is in effect as soon as its watch event arrives
// (milliseconds; upstream's informers are eventually consistent too).
// Requests admitted before the first list wait for it up to
// [ReadyTimeout], then are refused as upstream refuses them: 403 "not yet
// ready to handle request".
package configsource
