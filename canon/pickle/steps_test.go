package pickle

import "testing"

// TestSteps: every opcode the pickle module defines but STOP (which step runs itself) has a step,
// and no other byte has one (an unknown opcode is malformed).
func TestSteps(t *testing.T) {
	for op := range 256 {
		_, known := opNames[byte(op)]
		if has := steps[op] != nil; has != (known && op != opStop) {
			t.Errorf("opcode %s: a step %v, defined %v", OpName(byte(op)), has, known)
		}
	}
}
