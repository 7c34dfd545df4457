package surface

import (
	"io"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	pmodel "github.com/prometheus/common/model"
)

// ownPrefix marks the engine's own families; every other family is the
// runtime's (RuntimeMetrics).
const ownPrefix = "vllm:"

// unvalued are the labels whose values Family.Values leaves out: they name
// the engine, the model and a histogram's bucket, not a kind of series.
var unvalued = map[string]bool{"engine": true, "model_name": true, "le": true, "quantile": true}

// configInfo is the family whose labels are the server's configuration.
const configInfo = "vllm:cache_config_info"

// parseMetrics reads a /metrics page in Prometheus' text format into the
// engine's families and the runtime's. A NAME_created gauge that
// accompanies a counter NAME_total or a histogram NAME is folded into it
// (Family.Created).
func parseMetrics(r io.Reader) (own map[string]Family, runtime map[string]string, err error) {
	p := expfmt.NewTextParser(pmodel.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, nil, err
	}
	all := map[string]Family{}
	for name, f := range fams {
		all[name] = family(name, f)
	}
	for name, f := range all {
		base, ok := strings.CutSuffix(name, "_created")
		if !ok || f.Type != "gauge" {
			continue
		}
		for _, parent := range []string{base, base + "_total"} {
			if pf, ok := all[parent]; ok && pf.Type != "gauge" && !pf.Created {
				pf.Created = true
				all[parent] = pf
				delete(all, name)
				break
			}
		}
	}
	own, runtime = map[string]Family{}, map[string]string{}
	for name, f := range all {
		if strings.HasPrefix(name, ownPrefix) {
			own[name] = f
		} else {
			runtime[name] = f.Type
		}
	}
	return own, runtime, nil
}

// family is one parsed family, values dropped.
func family(name string, f *dto.MetricFamily) Family {
	out := Family{Type: strings.ToLower(f.GetType().String()), Help: f.GetHelp(), Labels: []string{}}
	values := map[string][]string{}
	for _, m := range f.GetMetric() {
		for _, l := range m.GetLabel() {
			n := l.GetName()
			if unvalued[n] {
				if n != "le" && n != "quantile" && !slices.Contains(out.Labels, n) {
					out.Labels = append(out.Labels, n)
				}
				continue
			}
			if !slices.Contains(out.Labels, n) {
				out.Labels = append(out.Labels, n)
			}
			if name != configInfo && !slices.Contains(values[n], l.GetValue()) {
				values[n] = append(values[n], l.GetValue())
			}
		}
	}
	slices.Sort(out.Labels)
	if len(values) > 0 {
		for _, v := range values {
			slices.Sort(v)
		}
		out.Values = values
	}
	return out
}
