package measure

import (
	"encoding/json"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
)

// Score scores a correctness output against its answer with scorer (one
// of spec.Scorers; docs/spec.md#correctness) and returns whether it is
// right and what it read from the output:
//
//   - exact: the output, spaces trimmed, equals the answer;
//   - contains: the answer appears in the output;
//   - regex: pattern's first capture group, at its first match, equals the
//     answer;
//   - number: the last number in the output equals the answer's;
//   - choice: the first standalone capital letter A–J equals the answer's;
//   - json: the output (or its first {…} or […]) is JSON equal to the
//     answer's.
func Score(scorer, pattern, output, answer string) (right bool, extracted string) {
	answer = strings.TrimSpace(answer)
	switch scorer {
	case "exact":
		got := strings.TrimSpace(output)
		return got == answer, got
	case "contains":
		return answer != "" && strings.Contains(output, answer), answer
	case "regex":
		re, err := regexp.Compile(pattern)
		if err != nil {
			return false, ""
		}
		m := re.FindStringSubmatch(output)
		if len(m) < 2 {
			return false, ""
		}
		return strings.TrimSpace(m[1]) == answer, m[1]
	case "number":
		nums := numberRE.FindAllString(output, -1)
		if len(nums) == 0 {
			return false, ""
		}
		got := nums[len(nums)-1]
		return sameNumber(got, answer), got
	case "choice":
		m := choiceRE.FindStringSubmatch(output)
		want := choiceRE.FindStringSubmatch(answer)
		if m == nil || want == nil {
			return false, ""
		}
		return m[1] == want[1], m[1]
	case "json":
		var got, want any
		text := strings.TrimSpace(output)
		if json.Unmarshal([]byte(text), &got) != nil {
			if i := strings.IndexAny(text, "{["); i >= 0 {
				dec := json.NewDecoder(strings.NewReader(text[i:]))
				if dec.Decode(&got) != nil {
					return false, ""
				}
			} else {
				return false, ""
			}
		}
		if json.Unmarshal([]byte(answer), &want) != nil {
			return false, ""
		}
		b, _ := json.Marshal(got)
		return reflect.DeepEqual(got, want), string(b)
	}
	return false, ""
}

var (
	numberRE = regexp.MustCompile(`-?\d[\d,]*(?:\.\d+)?`)
	choiceRE = regexp.MustCompile(`\b([A-J])\b`)
)

// sameNumber compares two numbers as written (thousands commas ignored).
func sameNumber(a, b string) bool {
	x, err1 := strconv.ParseFloat(strings.ReplaceAll(a, ",", ""), 64)
	y, err2 := strconv.ParseFloat(strings.ReplaceAll(b, ",", ""), 64)
	if err1 != nil || err2 != nil {
		return false
	}
	return math.Abs(x-y) <= 1e-9*max(1, math.Abs(y))
}
