// Package draft writes a rule file, and a file of rule unit tests, from
// what observe mode learned of an API (an observe.Document).
//
// A draft is a starting point for a person, not rules to serve unread: one
// route per operation seen, each field with the constraint its successful
// values support (an enum, a format, or a pattern with an example), and one
// error rule per upstream error no rule explained (errors that differ only
// in the values they quote are one), with the field its text names or
// callers changed to get past it, and the call that had to come first.
// Operations no call of which succeeded are written commented out. Traffic only
// suggests; so every inference carries its evidence as a comment (how many
// requests, which values, how many recoveries), and one with too little
// evidence, or two readings equally likely, is written commented out for the
// reviewer to confirm. What is written active passes signpost check, and the
// drafted tests, built from the samples observe mode kept, pass against it.
package draft
