package views

import (
	"testing"

	"github.com/slogate/slogate/internal/result"
)

// TestRepeatStopText: why repeat = "auto" stopped, worded from the rule
// and figures a cell records (runner and compare decide; this view words
// it for the console's "N repeats (auto): …" line).
func TestRepeatStopText(t *testing.T) {
	look := func(metric, rule string, repeats int) result.MetricLook {
		return result.MetricLook{Metric: metric, Rule: rule, Repeats: repeats, Min: 4, Max: 20, Tolerance: 0.05}
	}
	sized := func(l result.MetricLook, target, sized int, noise float64) result.MetricLook {
		l.Target, l.Sized, l.Noise = target, sized, noise
		return l
	}
	first := look("total_tps", "first_look", 4)
	first.Change = "regressed"
	second := look("ttft_ms", "second_look", 9)
	second.Change = "unchanged"
	undecidable := look("tbt_ms", "undecidable", 4)
	undecidable.BaselineRepeats = 1
	tests := []struct {
		name string
		d    *result.RepeatDesign
		want string
	}{
		{name: "not repeated automatically", d: nil, want: ""},
		{name: "written before the rule", d: &result.RepeatDesign{StopReason: "max_repeat = 8 reached"}, want: "max_repeat = 8 reached"},
		{name: "max_repeat", d: &result.RepeatDesign{Stop: &result.RepeatStop{Rule: result.StopMaxRepeat, MaxRepeat: 5}}, want: "max_repeat = 5 reached"},
		{name: "no run measurable", d: &result.RepeatDesign{Stop: &result.RepeatStop{Rule: result.StopNoRunMeasurable, MaxRepeat: 8}},
			want: "max_repeat = 8 reached, no run measurable"},
		{name: "max_gpu_time on GPUs", d: &result.RepeatDesign{Stop: &result.RepeatStop{Rule: result.StopBudget, BudgetS: 60, SpentS: 62}},
			want: "max_gpu_time = 1m0s reached (1m2s of GPU time spent)"},
		{name: "max_gpu_time on a CPU server", d: &result.RepeatDesign{Stop: &result.RepeatStop{Rule: result.StopBudget, BudgetS: 0.5, SpentS: 1, CPU: true}},
			want: "max_gpu_time = 500ms reached (1s of server time spent: a CPU server, no GPU found, so max_gpu_time counts its server time)"},
		{name: "no gated metric", d: &result.RepeatDesign{Stop: &result.RepeatStop{Rule: result.StopNoGatedMetric}}, want: "no gated metric"},
		{name: "a rule of a later build", d: &result.RepeatDesign{Stop: &result.RepeatStop{Rule: "max_wall_time"}}, want: "max_wall_time"},
		{name: "looks against a baseline", d: &result.RepeatDesign{Stop: &result.RepeatStop{Rule: result.StopLooks, Looks: []result.MetricLook{
			first, second, undecidable, look("tbt_ms", "second_look_inconclusive", 20)}}},
			want: "total_tps: regressed at the first look (4 repeats); ttft_ms: unchanged at the second look (9 repeats); " +
				"tbt_ms: no decision is possible against a baseline of 1 repeats (at most 20 here); stopped at 4; " +
				"tbt_ms: inconclusive at the second look (20 repeats, the design's last)"},
		{name: "looks alone", d: &result.RepeatDesign{Stop: &result.RepeatStop{Rule: result.StopLooks, Looks: []result.MetricLook{
			sized(look("total_tps", "alone_precise", 6), 6, 4, 0.021), sized(look("ttft_ms", "alone_max", 20), 21, 4, 0.083), look("tbt_ms", "no_noise", 4)}}},
			want: "total_tps: precise enough after 6 repeats: the noise of the first 4 (2.1%) decides a change of 5% with 6; " +
				"ttft_ms: stopped at max_repeat = 20: the noise of the first 4 (8.3%) needs 21 or more to decide a change of 5%; " +
				"tbt_ms: no noise can be measured from these values; stopped at 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RepeatStopText(tt.d); got != tt.want {
				t.Errorf("RepeatStopText =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestLookText: the looks that go on, worded as the live note of a cell
// still repeating would show them.
func TestLookText(t *testing.T) {
	tests := []struct {
		name string
		l    result.MetricLook
		want string
	}{
		{name: "below the minimum", l: result.MetricLook{Rule: "below_min", Repeats: 3, Min: 4}, want: "3 of at least 4 repeats"},
		{name: "the second stage", l: result.MetricLook{Rule: "second_stage", Repeats: 5, Target: 9, Sized: 4, Noise: 0.0304},
			want: "repeating to 9: the second stage, sized from the noise of the first 4 (3.0%)"},
		{name: "alone, repeating", l: result.MetricLook{Rule: "alone_repeating", Repeats: 4, Target: 11, Sized: 4, Noise: 0.04, Tolerance: 0.05},
			want: "repeating to 11: the noise of the first 4 (4.0%) needs them to decide a change of 5%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LookText(tt.l); got != tt.want {
				t.Errorf("LookText = %q, want %q", got, tt.want)
			}
		})
	}
}
