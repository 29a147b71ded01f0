package verify

import (
	"fmt"

	"github.com/convbatch/convbatch/jsonscan"
)

// parseKeyringWhole is ParseKeyring as it was before the keyring was
// decoded as a stream (main bf079fa): the whole document parsed onto one
// tape, then walked. It is the reference the streaming decoder is held
// to: the same keyrings accepted, decoded alike, and a keyring with one
// fault refused with the same error. Keyring format 2's members (key
// lifetimes, expires) were added to both alike.
func parseKeyringWhole(b []byte) (*Keyring, error) {
	p := keyringParser{}
	if err := p.tape.Parse(b, 0); err != nil {
		return nil, fmt.Errorf("keyring: %w", err)
	}
	var kr Keyring
	t := &p.tape
	switch t.Kind(0) {
	case jsonscan.Null:
		return &kr, nil
	case jsonscan.Object:
	default:
		return nil, fmt.Errorf("keyring: the keyring is a JSON %s, not an object", t.Kind(0))
	}
	for k := int32(1); k < t.Tokens[0].Next; k = t.Tokens[k+1].Next {
		v := k + 1
		switch {
		case t.KeyEquals(k, "envelope_keys"):
			keys, err := p.keys("envelope_keys", v, func(i int) string { return fmt.Sprintf("envelope_keys[%d]", i) })
			if err != nil {
				return nil, err
			}
			kr.EnvelopeKeys = keys
		case t.KeyEquals(k, "agents"):
			switch t.Kind(v) {
			case jsonscan.Null:
				kr.Agents = nil
				continue
			case jsonscan.Object:
			default:
				return nil, fmt.Errorf("keyring: agents is a JSON %s, not an object", t.Kind(v))
			}
			kr.Agents = make(map[string][]Key, t.Len(v))
			for a := v + 1; a < t.Tokens[v].Next; a = t.Tokens[a+1].Next {
				agent := t.Str(a)
				keys, err := p.keys(fmt.Sprintf("agents[%q]", agent), a+1, func(i int) string { return fmt.Sprintf("agents[%q][%d]", agent, i) })
				if err != nil {
					return nil, err
				}
				kr.Agents[agent] = keys
			}
		case t.KeyEquals(k, "expires"):
			if err := p.expires(&kr, v); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("keyring: unknown field %q", t.Str(k))
		}
	}
	kr.format2 = p.format2
	return &kr, nil
}
