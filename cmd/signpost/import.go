package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/signpost-proxy/signpost/rules"
	"github.com/signpost-proxy/signpost/rules/openapi"
)

// importStdin is what `signpost import openapi -` reads; tests replace it.
var importStdin io.Reader = os.Stdin

// maxSpecSize bounds the spec import reads. The largest public API
// descriptions are a few MiB.
const maxSpecSize = 64 << 20

const importWhat = "import what? e.g. signpost import openapi petstore.yaml"

const importHelp = `Usage: signpost import openapi SPEC [-o FILE]

Writes a starter rule file from an OpenAPI 3.0 or 3.1 document or a Swagger 2.0
one (YAML or JSON; - reads standard input; signpost import swagger SPEC is the
same command): one route per operation, named by its operationId, with the
fields its parameters and JSON request body declare, named as the API spells
its keys, and their enums, formats, patterns and bounds. Route paths carry the
path of the spec's first server (Swagger's basePath), as requests do, and the
upstream is that server's origin. Error rules are left to you: under each route
a comment lists the error responses the spec documents. The file passes
signpost check as written.`

// importCmd writes a starter rule file from an API description: an
// OpenAPI 3 or Swagger 2.0 document, whose flags fs holds.
func importCmd(fs *flag.FlagSet) runFunc {
	out := fs.String("o", "", "write the rule file to `FILE` instead of standard output")
	return func(args []string, stdout, stderr io.Writer) int {
		if len(args) == 0 {
			fmt.Fprintln(stderr, "signpost import: "+importWhat)
			return exitUsage
		}
		switch kind := args[0]; kind {
		case "openapi", "swagger":
			// The document's own version key tells one from the other.
			return importOpenAPI(fs, out, kind, args[1:], stdout, stderr)
		case "-h", "--help", "-help", "help":
			fs.SetOutput(stdout)
			fs.Usage()
			return exitOK
		default:
			fmt.Fprintf(stderr, "signpost import: unknown kind %q; %s%s\n", kind, didYouMean(kind, []string{"openapi", "swagger"}), importWhat)
			return exitUsage
		}
	}
}

// importOpenAPI parses args with fs, whose -o sets out, and writes the
// rule file imported from the spec they name. kind is the command's word
// for the spec, openapi or swagger, for messages.
func importOpenAPI(fs *flag.FlagSet, out *string, kind string, args []string, stdout, stderr io.Writer) int {
	// Flags may come before or after SPEC: signpost import openapi spec.yaml -o rules.yaml.
	var specs []string
	for {
		if err := fs.Parse(args); err != nil {
			return exitUsage
		}
		if fs.NArg() == 0 {
			break
		}
		specs = append(specs, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(specs) != 1 {
		fmt.Fprintf(stderr, "signpost import %s: name one spec, e.g. signpost import %s petstore.yaml -o rules.yaml (- reads standard input)\n", kind, kind)
		return exitUsage
	}
	spec := specs[0]
	if *out != "" && spec != "-" && filepath.Clean(*out) == filepath.Clean(spec) {
		fmt.Fprintf(stderr, "signpost import %s: -o %s would overwrite the spec; name another file, e.g. -o rules.yaml\n", kind, *out)
		return exitUsage
	}

	name, data, err := readSpec(spec)
	if err != nil {
		fmt.Fprintf(stderr, "signpost import: %s: %v\n", name, err)
		return exitFindings
	}
	res, err := openapi.Import(name, data)
	if err != nil {
		fmt.Fprintf(stderr, "signpost import: %v\n", err)
		return exitFindings
	}
	// The file must load as written; a problem here is a bug in import.
	if _, err := rules.Parse(cmp.Or(*out, "the imported rules"), res.Text); err != nil {
		fmt.Fprintf(stderr, "signpost import: the rule file written from %s does not pass signpost check; this is a bug in signpost import, please report it with the spec:\n%v\n", name, err)
		return exitFindings
	}
	if *out == "" {
		_, _ = stdout.Write(res.Text)
		return exitOK
	}
	if err := os.WriteFile(*out, res.Text, 0o644); err != nil {
		fmt.Fprintf(stderr, "signpost import: cannot write the rule file: %v\n", err)
		return exitFindings
	}
	fmt.Fprintf(stdout, "%s: %d %s, %d %s from %s; add error rules, then run signpost check %s\n",
		*out, res.Routes, plural(res.Routes, "route", "routes"), res.Fields, plural(res.Fields, "field", "fields"), name, *out)
	return exitOK
}

// readSpec reads the spec named on the command line and returns the name
// messages and the header give it.
func readSpec(spec string) (name string, data []byte, err error) {
	var r io.Reader
	if spec == "-" {
		name, r = "standard input", importStdin
	} else {
		f, err := os.Open(spec)
		if err != nil {
			return spec, nil, fmt.Errorf("cannot read the spec: %v", specPathErr(err))
		}
		defer f.Close()
		name, r = spec, f
	}
	data, err = io.ReadAll(io.LimitReader(r, maxSpecSize+1))
	if err != nil {
		return name, nil, fmt.Errorf("cannot read the spec: %v", specPathErr(err))
	}
	if len(data) > maxSpecSize {
		return name, nil, fmt.Errorf("cannot read the spec: it is larger than %s", rules.SizeText(maxSpecSize))
	}
	return name, data, nil
}

// specPathErr drops the operation and path an *fs.PathError repeats.
func specPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
