package sink

import (
	"encoding/json"
	"io"

	"github.com/convbatch/convbatch/verify"
)

// WriteReceipts writes one line per resolved receipt to ReceiptsFile in
// txn: position, conversation id, algorithm, quorum, statement counts,
// status and every reason. No key material and no content.
func WriteReceipts(txn *Txn, rel string, results []verify.ReceiptResult) error {
	return txn.WriteFile(rel, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		for i := range results {
			if err := enc.Encode(&results[i]); err != nil {
				return err
			}
		}
		return nil
	})
}
