package sink

import (
	"bufio"
	"encoding/json"
	"fmt"

	"github.com/convbatch/convbatch/verify"
)

// WriteReceipts writes one line per resolved receipt to
// receipts/receipts.jsonl in txn: position, conversation id, algorithm,
// quorum, statement counts, status and every reason. No key material and no
// content.
func WriteReceipts(txn *Txn, results []verify.ReceiptResult) error {
	f, err := txn.Create("receipts/receipts.jsonl")
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	enc := json.NewEncoder(bw)
	for i := range results {
		if err = enc.Encode(&results[i]); err != nil {
			break
		}
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("receipts: %w", err)
	}
	return nil
}
