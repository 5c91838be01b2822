// Package setting names the settings that messages advise changing, so
// that an error reads in its reader's words: a Go program's Config fields
// and options, or the command line's flags. The library's errors name a
// setting by its Name; the command line sets Spell once, before it runs
// anything, and every message then names the flag.
package setting

import "fmt"

// Name is a setting, written as a Go program sets it.
type Name string

// String is the name as Spell spells it (fmt calls it for %s and %v).
func (n Name) String() string { return Spell(n) }

// Spell spells a setting in messages: its Go name unless the command line
// spells it as a flag.
var Spell = func(n Name) string { return string(n) }

// The settings messages advise changing.
const (
	Format        Name = "Config.Format"
	Option        Name = "a format option"
	Semantics     Name = "Options.Semantics"
	ColumnCase    Name = "Options.ColumnCase"
	MaxLine       Name = "Config.MaxLine"
	Shard         Name = "Config.Shard"
	Force         Name = "Config.Force"
	DedupInputs   Name = "Config.DedupInputs"
	OnSuccess     Name = "Config.OnSuccess"
	FailedDir     Name = "Config.FailedDir"
	OutDir        Name = "Config.OutDir"
	DeadLetter    Name = "Config.DeadLetterDir"
	Materialize   Name = "Config.Materialize"
	TableMode     Name = "Config.TableMode"
	PrimaryKey    Name = "a primary-key hint (Config.Hints)"
	ColumnType    Name = "a column-type hint (Config.Hints)"
	DDLDir        Name = "Config.DDLDir"
	NoMaintain    Name = "Config.NoMaintain"
	ShowFiles     Name = "ShowOptions.Files"
	BucketTimeout Name = "objstore.Policy.Timeout"
	BucketTries   Name = "objstore.Policy.Attempts"
)

// All are the settings above, for the command line's test that it spells
// every one.
var All = []Name{Format, Option, Semantics, ColumnCase, MaxLine, Shard, Force, DedupInputs,
	OnSuccess, FailedDir, OutDir, DeadLetter, Materialize, TableMode, PrimaryKey, ColumnType, DDLDir,
	NoMaintain, ShowFiles, BucketTimeout, BucketTries}

// Error is an error whose text names settings and is spelled when it is
// read: for errors made before the command line sets Spell (package
// variables).
func Error(format string, args ...any) error { return &spelled{format, args} }

type spelled struct {
	format string
	args   []any
}

func (e *spelled) Error() string { return fmt.Sprintf(e.format, e.args...) }
