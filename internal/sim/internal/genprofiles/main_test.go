package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/slogate/slogate/internal/sim"
)

// TestProfileMirrorsSim fails when the generator's copy of sim.Profile
// drifts from the simulator's type: every struct reached from Profile must
// have the same fields in the same order, with the same names, JSON tags and
// types, so that a profile the generator writes is exactly one the simulator
// reads (a renamed tag would otherwise be dropped silently by json.Unmarshal).
func TestProfileMirrorsSim(t *testing.T) {
	for _, d := range typeDiffs("Profile", reflect.TypeFor[Profile](), reflect.TypeFor[sim.Profile]()) {
		t.Error(d)
	}
}

// typeDiffs lists where mirror and real differ, each as path: what.
func typeDiffs(path string, mirror, real reflect.Type) []string {
	if mirror.Kind() != real.Kind() {
		return []string{path + ": the generator has " + mirror.String() + ", sim has " + real.String()}
	}
	switch mirror.Kind() {
	case reflect.Pointer, reflect.Slice:
		return typeDiffs(path+"[]", mirror.Elem(), real.Elem())
	case reflect.Array:
		if mirror.Len() != real.Len() {
			return []string{path + ": the generator has " + mirror.String() + ", sim has " + real.String()}
		}
		return typeDiffs(path+"[]", mirror.Elem(), real.Elem())
	case reflect.Map:
		return append(typeDiffs(path+"[key]", mirror.Key(), real.Key()), typeDiffs(path+"[]", mirror.Elem(), real.Elem())...)
	case reflect.Struct:
		var diffs []string
		for i := range max(mirror.NumField(), real.NumField()) {
			if i >= mirror.NumField() {
				diffs = append(diffs, path+": sim has field "+real.Field(i).Name+" the generator lacks")
				continue
			}
			if i >= real.NumField() {
				diffs = append(diffs, path+": the generator has field "+mirror.Field(i).Name+" sim lacks")
				continue
			}
			m, r := mirror.Field(i), real.Field(i)
			where := path + "." + m.Name
			if m.Name != r.Name {
				diffs = append(diffs, path+": field "+strconv.Itoa(i)+" is "+m.Name+" in the generator, "+r.Name+" in sim")
				continue
			}
			if mt, rt := m.Tag.Get("json"), r.Tag.Get("json"); mt != rt {
				diffs = append(diffs, where+`: json tag "`+mt+`" in the generator, "`+rt+`" in sim`)
			}
			diffs = append(diffs, typeDiffs(where, m.Type, r.Type)...)
		}
		return diffs
	}
	if mirror.String() != real.String() { // basic kinds: the same kind is the same type
		return []string{path + ": the generator has " + mirror.String() + ", sim has " + real.String()}
	}
	return nil
}

// TestProfilesAreGenerated fails when sim/profiles/*.json is not what the
// generator writes from the seeds: a hand edit, or a change to the
// generator without `go generate ./...` in sim/.
//
// Regenerate: cd sim && go generate ./...
func TestProfilesAreGenerated(t *testing.T) {
	const seeds, profiles = "../../../../testdata/seeds", "../../profiles"
	want := map[string]*Profile{"generic.json": generic()}
	for _, c := range choices {
		p, err := fromSeed(filepath.Join(seeds, c.file), c)
		if err != nil {
			t.Fatal(err)
		}
		want[p.Name+".json"] = p
	}
	files, err := filepath.Glob(filepath.Join(profiles, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(want) {
		t.Errorf("%s holds %d profiles, the generator writes %d", profiles, len(files), len(want))
	}
	for name, p := range want {
		got, err := os.ReadFile(filepath.Join(profiles, name))
		if err != nil {
			t.Errorf("%v (regenerate: cd sim && go generate ./...)", err)
			continue
		}
		gen, err := encode(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, gen) {
			t.Errorf("%s/%s is not what the generator writes (regenerate: cd sim && go generate ./...)", profiles, name)
		}
	}
}
